package bolt

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
)

// corruptText flips a byte inside the first stored copy of text in the
// file, so that record's CRC no longer matches.
func corruptText(t *testing.T, path, text string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(raw, []byte(text))
	if i < 0 {
		t.Fatalf("%q not found in %s", text, path)
	}
	raw[i] ^= 0x20
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSalvage(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	s, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var items []store.Item
	for i := range 30 {
		m := mem("ns", fmt.Sprintf("id%02d", i))
		m.Text = fmt.Sprintf("memory text number %02d", i)
		items = append(items, store.Item{Memory: m, Vector: vec(i, 8)})
	}
	if err := s.PutBatch(items); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	corruptText(t, src, "memory text number 07")

	// Check names the damaged record.
	ro, err := Open(src, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var probs []store.Problem
	if _, err := ro.Check(func(p store.Problem) { probs = append(probs, p) }); err != nil {
		t.Fatal(err)
	}
	_ = ro.Close()
	if len(probs) != 1 || probs[0].ID != "id07" || !errors.Is(probs[0].Err, store.ErrCorrupt) {
		t.Fatalf("check problems %v", probs)
	}

	dst := filepath.Join(dir, "dst.db")
	var skipped []store.Problem
	st, err := Salvage(src, dst, func(p store.Problem) { skipped = append(skipped, p) })
	if err != nil {
		t.Fatal(err)
	}
	if st.Copied != 29 || st.Vectors != 29 || st.Skipped != 1 || skipped[0].ID != "id07" {
		t.Fatalf("salvage %+v, skipped %v", st, skipped)
	}
	out, err := Open(dst, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	for i, it := range items {
		got, err := out.Get("ns", it.Memory.ID)
		if i == 7 {
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("corrupt record copied: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("valid record %s lost: %v", it.Memory.ID, err)
		}
		equalMem(t, got, it.Memory)
		v, err := out.Vector("ns", it.Memory.ID)
		if err != nil {
			t.Fatal(err)
		}
		equalVec(t, v, it.Vector)
	}
	if cs, err := out.Check(nil); err != nil || cs.Problems != 0 {
		t.Fatalf("salvaged store: %+v %v", cs, err)
	}
	if _, err := Salvage(src, dst, nil); err == nil {
		t.Fatal("salvage overwrote an existing file")
	}
}

func TestSalvageUnopenable(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		content []byte
		want    error
	}{
		{"empty file", nil, store.ErrCorrupt},
		{"binary garbage", bytes.Repeat([]byte("\x00\xffnot a bbolt file "), 1000), store.ErrCorrupt},
		// Text is no store at all (a JSON file given by mistake): salvage
		// advice would mislead.
		{"text", bytes.Repeat([]byte("not a bbolt file "), 1000), store.ErrIncompatible},
		{"truncated", nil, store.ErrCorrupt}, // filled below
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(dir, tc.name+".db")
			content := tc.content
			if tc.name == "truncated" {
				s, err := Open(src, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Put(mem("ns", "a"), nil); err != nil {
					t.Fatal(err)
				}
				_ = s.Close()
				raw, _ := os.ReadFile(src)
				content = raw[:1000]
			}
			if err := os.WriteFile(src, content, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Salvage(src, filepath.Join(dir, tc.name+".out.db"), nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}
