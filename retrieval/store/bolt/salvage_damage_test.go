package bolt

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// writeDamageFixture writes a store of 300 memories with vectors in
// namespace "ns" (pages of its own) and 2 in "tiny" (an inline bucket),
// with long enough texts to span many leaf pages; it returns the file and
// the memories by key.
func writeDamageFixture(t testing.TB, dir string) (string, map[nsID]memory.Memory) {
	t.Helper()
	path := filepath.Join(dir, "orig.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[nsID]memory.Memory{}
	var items []store.Item
	for i := range 300 {
		m := mem("ns", fmt.Sprintf("m%03d", i))
		m.Text = fmt.Sprintf("memory %03d: %0200d", i, i)
		items = append(items, store.Item{Memory: m, Vector: vec(i, 16)})
	}
	for i := range 2 {
		m := mem("tiny", fmt.Sprintf("t%d", i))
		items = append(items, store.Item{Memory: m})
	}
	for _, it := range items {
		// As a reader gets it back (times as JSON gives them).
		b, err := store.MarshalMemory(it.Memory)
		if err != nil {
			t.Fatal(err)
		}
		var m memory.Memory
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		want[nsID{m.Namespace, m.ID}] = m
	}
	if err := s.PutBatch(items); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, want
}

// pagesOf maps each memory key to the leaf page holding it, and lists the
// branch pages, in an intact file (the scan's own parsers, page by page).
func pagesOf(t *testing.T, raw []byte) (leafOf map[nsID]uint64, branches []uint64, pageSize int) {
	t.Helper()
	meta, ok := readMeta(raw)
	if !ok {
		t.Fatal("meta page 0 invalid in the intact file")
	}
	if m1, ok := readMeta(raw[meta.pageSize:]); ok && m1.txid > meta.txid {
		meta = m1
	}
	ps := meta.pageSize
	leafOf = map[nsID]uint64{}
	for id := uint64(2); id < meta.hwm && int(id)*ps < len(raw); id++ {
		p := raw[int(id)*ps:]
		if binary.LittleEndian.Uint64(p[0:8]) != id {
			continue
		}
		overflow := int(binary.LittleEndian.Uint32(p[12:16]))
		switch binary.LittleEndian.Uint16(p[8:10]) {
		case rawFlagBranch:
			branches = append(branches, id)
		case rawFlagLeaf:
			fd := rawFound{mems: map[nsID]memory.Memory{}, vecs: map[string][][]float32{}, nsVecs: map[nsID][]float32{}}
			fd.leaf(p[:(1+overflow)*ps], "", 0)
			for k := range fd.mems {
				leafOf[k] = id
			}
		}
		id += uint64(overflow)
	}
	return leafOf, branches, ps
}

// salvageAll runs Salvage on path and returns what the new file holds.
func salvageAll(t *testing.T, path string) (map[nsID]memory.Memory, SalvageStats, []store.Problem) {
	t.Helper()
	out := path + ".salvaged"
	var probs []store.Problem
	st, err := Salvage(path, out, func(p store.Problem) { probs = append(probs, p) })
	if err != nil {
		return nil, st, probs
	}
	s, err := Open(out, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open salvaged: %v", err)
	}
	defer s.Close()
	got := map[nsID]memory.Memory{}
	for _, ns := range []string{"ns", "tiny"} {
		after := ""
		for {
			recs, next, err := s.Page(ns, after, 1000, false)
			if err != nil {
				t.Fatalf("read salvaged: %v", err)
			}
			for _, r := range recs {
				got[nsID{ns, r.Memory.ID}] = r.Memory
			}
			if next == "" {
				break
			}
			after = next
		}
	}
	return got, st, probs
}

// TestSalvageDamagedPages damages known pages of a 300-memory file: every
// branch page, and two leaf pages. Salvage must bring back every memory
// whose leaf page is intact (bbolt's walk cannot reach them: the branches
// above are gone), each exactly as written, and none from the damaged
// leaves; Check and a reader must report the damage, not crash.
func TestSalvageDamagedPages(t *testing.T) {
	dir := t.TempDir()
	orig, want := writeDamageFixture(t, dir)
	raw, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	leafOf, branches, ps := pagesOf(t, raw)
	if len(leafOf) != len(want) {
		t.Fatalf("page map found %d of %d memories in the intact file", len(leafOf), len(want))
	}
	if len(branches) == 0 {
		t.Fatal("fixture has no branch page")
	}
	lost := map[uint64]bool{leafOf[nsID{"ns", "m010"}]: true, leafOf[nsID{"ns", "m200"}]: true}
	rng := rand.New(rand.NewPCG(1, 2))
	damage := func(id uint64) {
		for i := range ps {
			raw[int(id)*ps+i] = byte(rng.UintN(256))
		}
	}
	for _, id := range branches {
		damage(id)
	}
	for id := range lost {
		damage(id)
	}
	path := filepath.Join(dir, "damaged.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}

	got, st, probs := salvageAll(t, path)
	if got == nil {
		t.Fatalf("salvage failed; problems %v", probs)
	}
	intact := 0
	for k, m := range want {
		g, ok := got[k]
		switch {
		case lost[leafOf[k]] && ok:
			t.Errorf("%v came back from a destroyed page", k)
		case lost[leafOf[k]]:
		case !ok:
			t.Errorf("%v: intact on page %d, not salvaged", k, leafOf[k])
		case !sameMem(g, m):
			t.Errorf("%v salvaged as %+v, want %+v", k, g, m)
		default:
			intact++
		}
	}
	if len(got) != intact {
		t.Errorf("salvaged %d memories, %d of them intact originals", len(got), intact)
	}
	for id := range lost {
		named := false
		for _, p := range probs {
			named = named || strings.Contains(p.Err.Error(), fmt.Sprintf("page %d ", id))
		}
		if !named {
			t.Errorf("destroyed page %d not reported; problems %v", id, probs)
		}
	}
	if st.FromPages == 0 || len(probs) == 0 {
		t.Errorf("stats %+v, %d problems: the page scan did not run or the damage went unreported", st, len(probs))
	}
	t.Logf("%d branch + %d leaf pages destroyed: %d of %d memories salvaged (%d from pages), %d problems",
		len(branches), len(lost), len(got), len(want), st.FromPages, len(probs))

	// Check and a plain reader answer with the damage.
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		return // refused at open: fine
	}
	defer s.Close()
	cst, err := s.Check(nil)
	if err == nil && cst.Problems == 0 {
		t.Error("Check of the damaged file reports no problem")
	}
	if _, _, err := s.Page("ns", "", 1000, false); err == nil {
		t.Log("reading ns worked despite the damage")
	}
}

// TestSalvageRandomFlips is the review's case: 50 random bytes flipped
// after the first 8 KiB of a 300-memory file, many seeds. Salvage, Check
// and reading must never crash, and what salvage returns is the original.
func TestSalvageRandomFlips(t *testing.T) {
	dir := t.TempDir()
	orig, want := writeDamageFixture(t, dir)
	clean, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			raw := append([]byte(nil), clean...)
			rng := rand.New(rand.NewPCG(seed, 7))
			for range 50 {
				raw[8192+rng.IntN(len(raw)-8192)] ^= byte(1 + rng.UintN(255))
			}
			path := filepath.Join(t.TempDir(), "flipped.db")
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			checkDamagedFile(t, path, want)
		})
	}
}

// checkDamagedFile runs Check, reads and Salvage on path: none may crash,
// and every memory salvaged equals its original.
func checkDamagedFile(t *testing.T, path string, want map[nsID]memory.Memory) {
	t.Helper()
	if s, err := Open(path, Options{ReadOnly: true}); err == nil {
		_, _ = s.Check(nil)
		for _, ns := range []string{"ns", "tiny"} {
			_, _, _ = s.Page(ns, "", 1000, true)
		}
		_ = s.Close()
	}
	got, _, _ := salvageAll(t, path)
	for k, g := range got {
		if m, ok := want[k]; !ok || !sameMem(g, m) {
			t.Errorf("salvaged %v = %+v: not an original memory", k, g)
		}
	}
}

// FuzzSalvageDamagedPages overwrites bytes of a 300-memory file at fuzzed
// places: salvage, check and reading never crash.
func FuzzSalvageDamagedPages(f *testing.F) {
	f.Add(uint64(1), uint16(9000), []byte{0xff, 0, 0xff})
	f.Add(uint64(2), uint16(20000), []byte("page garbage"))
	dir := f.TempDir()
	orig, want := writeDamageFixture(f, dir)
	clean, err := os.ReadFile(orig)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, seed uint64, at uint16, patch []byte) {
		raw := append([]byte(nil), clean...)
		off := 8192 + int(at)%(len(raw)-8192)
		copy(raw[off:], patch)
		rng := rand.New(rand.NewPCG(seed, 3))
		for range 8 {
			raw[8192+rng.IntN(len(raw)-8192)] ^= byte(rng.UintN(256))
		}
		path := filepath.Join(t.TempDir(), "f.db")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		checkDamagedFile(t, path, want)
	})
}

// FuzzRawLeaf feeds arbitrary bytes to the page scan's leaf parser: it is
// bounds-checked, so it never panics, and keeps only valid records.
func FuzzRawLeaf(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 'k', 'M', 1, 0})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, p []byte) {
		fd := rawFound{mems: map[nsID]memory.Memory{}, vecs: map[string][][]float32{}, nsVecs: map[nsID][]float32{}}
		fd.leaf(p, "", 0)
		_, _ = readFreelist(p)
		_, _ = readMeta(p)
		for k, m := range fd.mems {
			if m.Namespace != k.ns || m.ID != k.id || m.Validate() != nil {
				t.Fatalf("kept %v = %+v", k, m)
			}
		}
	})
}

// sameMem compares memories by their stored JSON.
func sameMem(a, b memory.Memory) bool {
	a.SchemaVersion, b.SchemaVersion = 0, 0 // set by the store on write
	ja, err1 := store.MarshalMemory(a)
	jb, err2 := store.MarshalMemory(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
