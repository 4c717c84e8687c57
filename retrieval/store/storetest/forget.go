package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
)

// testDeleteNamespace: every memory, vector and the vector generation of
// one namespace go at once, durably (across a reopen); the others stay;
// the namespace can be written again; a namespace never written is 0.
func testDeleteNamespace(t *testing.T, o Opener) {
	b := open(t, o, 3)
	for i := range 30 {
		var v []float32
		if i%2 == 0 {
			v = vec(i, 3)
		}
		put(t, b, mem("gone", fmt.Sprintf("m%02d", i)), v)
	}
	put(t, b, mem("kept", "k1"), vec(1, 3))
	n, err := b.DeleteNamespace("gone")
	if err != nil || n != 30 {
		t.Fatalf("DeleteNamespace = %d, %v; want 30", n, err)
	}
	check := func(b store.Backend) {
		t.Helper()
		if c := count(t, b, "gone"); c != 0 {
			t.Fatalf("%d memories left", c)
		}
		if _, err := b.Get("gone", "m00"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get after DeleteNamespace: %v", err)
		}
		if _, err := b.Vector("gone", "m00"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Vector after DeleteNamespace: %v", err)
		}
		if g, err := b.VectorGen("gone"); err != nil || !g.IsZero() {
			t.Fatalf("VectorGen after DeleteNamespace: %v, %v", g, err)
		}
		nss, err := b.Namespaces()
		if err != nil || !slices.Equal(nss, []string{"kept"}) {
			t.Fatalf("Namespaces = %v, %v", nss, err)
		}
		if c := count(t, b, "kept"); c != 1 {
			t.Fatalf("other namespace: %d memories", c)
		}
	}
	check(b)
	if o.Reopen != nil {
		b = o.Reopen(t, b)
		check(b)
	}
	if n, err := b.DeleteNamespace("gone"); err != nil || n != 0 {
		t.Fatalf("second DeleteNamespace = %d, %v", n, err)
	}
	if n, err := b.DeleteNamespace("never"); err != nil || n != 0 {
		t.Fatalf("DeleteNamespace of a namespace never written = %d, %v", n, err)
	}
	if _, err := b.DeleteNamespace("../x"); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("DeleteNamespace(../x): %v, want ErrInvalid", err)
	}
	put(t, b, mem("gone", "again"), vec(5, 3))
	if c := count(t, b, "gone"); c != 1 {
		t.Fatalf("re-created namespace: %d memories", c)
	}
}
