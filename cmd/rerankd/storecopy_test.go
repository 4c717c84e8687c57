package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
	"github.com/rerankd/rerankd/retrieval/store/pgstore"
)

// fillStore writes 3 namespaces of n memories each, every other one with a
// vector, with sources, metadata and times.
func fillStore(t *testing.T, st store.Backend, n int) {
	t.Helper()
	for _, ns := range []string{"alpha", "beta", "gamma"} {
		var items []store.Item
		for i := range n {
			m := memory.Memory{Namespace: ns, ID: fmt.Sprintf("id%04d", i), Text: fmt.Sprintf("%s memory %d", ns, i),
				Time:   time.Date(2026, 1, 2, 3, 4, 5, i, time.FixedZone("x", 3600)),
				Source: "session-" + fmt.Sprint(i%7), Metadata: memory.Strings(map[string]string{"speaker": fmt.Sprint("s", i%3)})}
			var vec []float32
			if i%2 == 0 {
				vec = []float32{float32(i), 1, 2, 3}
			}
			items = append(items, store.Item{Memory: m, Vector: vec})
		}
		if err := st.PutBatch(items); err != nil {
			t.Fatal(err)
		}
	}
}

func copyCLI(t *testing.T, from, to string) copyReport {
	t.Helper()
	code, out, errs := runCLI(t, "store", "copy", "--from", from, "--to", to, "--batch", "64", "--json")
	if code != 0 {
		t.Fatalf("store copy %s → %s: exit %d: %s %s", from, to, code, out, errs)
	}
	var rep copyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("copy report %q: %v", out, err)
	}
	return rep
}

// TestStoreCopy: bbolt → PostgreSQL → bbolt keeps every memory, field and
// vector; a second run writes nothing (resumable); a partly damaged target
// is completed; `store check` works on both backends; bad flags are
// usage errors.
func TestStoreCopy(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	bs, err := bolt.Open(src, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	fillStore(t, bs, 150)
	_ = bs.Close()
	url := pgtest.Shared(t).NewDB(t)

	rep := copyCLI(t, src, url)
	if rep.Copied != 450 || rep.Same != 0 || rep.Namespaces != 3 || rep.Check.Memories != 450 || rep.Check.Vectors != 225 || len(rep.Problems) != 0 {
		t.Fatalf("first copy: %+v", rep)
	}
	if strings.Contains(rep.To, pgtest.Shared(t).Password()) {
		t.Fatalf("the report shows the password: %s", rep.To)
	}
	// Resumed: nothing to do.
	if rep := copyCLI(t, src, url); rep.Copied != 0 || rep.Same != 450 {
		t.Fatalf("second copy: %+v", rep)
	}
	// A target that lost two memories and holds one changed: completed.
	pg, err := pgstore.Open(url, pgstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"id0003", "id0100"} {
		if err := pg.Delete("beta", id); err != nil {
			t.Fatal(err)
		}
	}
	if err := pg.Put(memory.Memory{Namespace: "gamma", ID: "id0004", Text: "changed"}, nil); err != nil {
		t.Fatal(err)
	}
	_ = pg.Close()
	if rep := copyCLI(t, src, url); rep.Copied != 3 || rep.Same != 447 || len(rep.Problems) != 0 {
		t.Fatalf("copy onto a damaged target: %+v", rep)
	}

	// Back into a new bbolt file: the same records as the source.
	back := filepath.Join(dir, "back.db")
	if rep := copyCLI(t, url, back); rep.Copied != 450 {
		t.Fatalf("copy back: %+v", rep)
	}
	a, err := bolt.Open(src, bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Close() }()
	b, err := bolt.Open(back, bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	var want []store.Record
	if err := a.ForEach(func(r store.Record) error { want = append(want, r); return nil }); err != nil {
		t.Fatal(err)
	}
	i := 0
	if err := b.ForEach(func(r store.Record) error {
		if i >= len(want) || !sameRecord(r, want[i]) || r.Memory.Time.Format(time.RFC3339Nano) != want[i].Memory.Time.Format(time.RFC3339Nano) {
			return fmt.Errorf("record %d: %+v, want %+v", i, r, want[min(i, len(want)-1)])
		}
		i++
		return nil
	}); err != nil || i != len(want) {
		t.Fatalf("round trip: %v (%d of %d)", err, i, len(want))
	}

	// store check on PostgreSQL.
	code, out, errs := runCLI(t, "store", "check", "--store", url)
	if code != 0 || !strings.Contains(out, "450 memories") || !strings.Contains(out, "0 problems") || strings.Contains(out+errs, pgtest.Shared(t).Password()) {
		t.Fatalf("store check on PostgreSQL: %d %q %q", code, out, errs)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"store", "copy", "--from", src}, "--from and --to are required"},
		{[]string{"store", "copy", "--from", src, "--to", src}, "the same store"},
		{[]string{"store", "copy", "--from", src, "--to", back, "--batch", "0"}, "--batch 0"},
		{[]string{"store", "copy", "--from", filepath.Join(dir, "missing", "x.db"), "--to", back}, "--from"},
		{[]string{"store", "copy", "--from", "postgres://u:pw@127.0.0.1:1/db?sslmode=disable", "--to", back}, "unavailable"},
		{[]string{"store", "salvage", "--store", url, "--out", back}, "PostgreSQL"},
	} {
		code, out, errs := runCLI(t, tc.args...)
		if code == 0 || !strings.Contains(errs, tc.want) || strings.Contains(out+errs, ":pw@") {
			t.Errorf("%v: exit %d, stderr %q; want an error naming %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestStoreCopyInterrupted: a copy stopped between pages names how far it
// got and how to finish; running it again completes the target.
func TestStoreCopyInterrupted(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	bs, err := bolt.Open(src, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	fillStore(t, bs, 40)
	_ = bs.Close()
	from, err := bolt.Open(src, bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	to, err := bolt.Open(dst, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var rep copyReport
	err = copyNamespace(ctx, from, to, "alpha", 10, &rep, progress.New(io.Discard, 40, "", progress.Items))
	msg := copyFailed("alpha", err, &rep).Error()
	if !errors.Is(err, context.Canceled) || !strings.Contains(msg, "interrupted") || !strings.Contains(msg, "run the same command again to resume") {
		t.Fatalf("interrupted copy: %v -> %q", err, msg)
	}
	_, _ = from.Close(), to.Close()
	if rep := copyCLI(t, src, dst); rep.Copied != 120 || len(rep.Problems) != 0 {
		t.Fatalf("resumed copy: %+v", rep)
	}
}

// TestStoreJSONNames: the --json reports use snake_case names, as the
// HTTP API does, not Go field names.
func TestStoreJSONNames(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	bs, err := bolt.Open(src, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	fillStore(t, bs, 3)
	_ = bs.Close()
	_, out, _ := runCLI(t, "store", "copy", "--from", src, "--to", filepath.Join(dir, "dst.db"), "--json")
	_, checkOut, _ := runCLI(t, "store", "check", "--store", src, "--json")
	for _, c := range []struct {
		out  string
		keys []string
	}{
		{out, []string{`"from":`, `"to":`, `"namespaces":`, `"copied":`, `"same":`, `"extra":`, `"check":{"namespaces":`, `"memories":`, `"vectors":`, `"problems":`}},
		{checkOut, []string{`"store":`, `"check":{"namespaces":3,"memories":9,"vectors":6,"problems":0}`}},
	} {
		for _, k := range c.keys {
			if !strings.Contains(c.out, k) {
				t.Errorf("%s lacks %s", c.out, k)
			}
		}
		if strings.ContainsAny(strings.SplitN(c.out, ":", 2)[0], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Errorf("a Go field name in %s", c.out)
		}
	}
}
