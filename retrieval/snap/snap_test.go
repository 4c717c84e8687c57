package snap

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/hnsw"
	"github.com/rerankd/rerankd/retrieval/store"
)

func testIndex(t *testing.T, dim, n int) (*hnsw.HNSW, hnsw.Config) {
	t.Helper()
	cfg := hnsw.DefaultConfig(dim)
	idx, err := hnsw.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		v := make([]float32, dim)
		v[i%dim], v[(i+1)%dim] = 1, float32(i+1)
		if err := idx.Add(string(rune('a'+i)), v); err != nil {
			t.Fatal(err)
		}
	}
	return idx, cfg
}

// TestRoundTrip: what Write saves, Read loads when it matches, and refuses
// with the right kind when it does not.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	idx, cfg := testIndex(t, 4, 10)
	gen := store.VectorGen{Seq: 3, Stamp: 7}
	h := Header{Namespace: "ns", Gen: gen, Dim: 4, Index: cfg, Vectors: idx.Len(), Saved: time.Now().UTC()}
	if err := Write(dir, h, idx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, Name("ns"))
	if !IsName(Name("ns")) || IsName(TmpPrefix+"x"+Ext) || IsName("README") {
		t.Fatal("IsName")
	}
	want := Want{Namespace: "ns", Gen: gen, Dim: 4, Index: cfg}
	got, gh, err := Read(path, want)
	if err != nil || got.Len() != 10 || gh.Gen != gen || gh.Namespace != "ns" {
		t.Fatalf("Read = %v vectors, header %+v, %v", got, gh, err)
	}
	other := cfg
	other.M++
	for _, tc := range []struct {
		name string
		path string
		want Want
		kind string
	}{
		{"missing", filepath.Join(dir, Name("none")), want, "missing"},
		{"stale", path, Want{Namespace: "ns", Gen: store.VectorGen{Seq: 4, Stamp: 7}, Dim: 4, Index: cfg}, "stale"},
		{"no generation", path, Want{Namespace: "ns", Dim: 4, Index: cfg}, "stale"},
		{"another namespace", path, Want{Namespace: "other", Gen: gen, Dim: 4, Index: cfg}, "corrupt"},
		{"dimension", path, Want{Namespace: "ns", Gen: gen, Dim: 8, Index: cfg}, "dimension"},
		{"graph parameters", path, Want{Namespace: "ns", Gen: gen, Dim: 4, Index: other}, "config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Read(tc.path, tc.want)
			var m *MissError
			if !errors.As(err, &m) || Kind(err) != tc.kind {
				t.Fatalf("Read: %v, want a %s miss", err, tc.kind)
			}
		})
	}
}

// TestDamage: a flipped byte anywhere, or a cut file, is refused as
// corrupt, never loaded and never a panic.
func TestDamage(t *testing.T) {
	idx, cfg := testIndex(t, 4, 10)
	var buf bytes.Buffer
	h := Header{Namespace: "ns", Seq: 5, Dim: 4, Index: cfg, Vectors: idx.Len()}
	if err := Encode(&buf, h, idx); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	want := Want{Namespace: "ns", Dim: 4, Index: cfg}
	fresh := func(Header) error { return nil }
	if x, got, err := Decode(bytes.NewReader(good), want, fresh); err != nil || x.Len() != 10 || got.Seq != 5 {
		t.Fatalf("Decode of an intact snapshot: %v", err)
	}
	for i := 0; i < len(good); i += max(1, len(good)/97) {
		bad := bytes.Clone(good)
		bad[i] ^= 0x5a
		if _, _, err := Decode(bytes.NewReader(bad), want, fresh); err == nil {
			t.Fatalf("byte %d of %d flipped: loaded", i, len(good))
		}
	}
	for _, n := range []int{0, 7, 12, len(good) / 2, len(good) - 1} {
		if _, _, err := Decode(bytes.NewReader(good[:n]), want, fresh); Kind(err) != "corrupt" {
			t.Fatalf("cut at %d of %d: %v, want a corrupt miss", n, len(good), err)
		}
	}
	// A file saved over the old one leaves no temporary file behind.
	dir := t.TempDir()
	for range 2 {
		if err := Write(dir, h, idx); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 || ents[0].Name() != Name("ns") {
		t.Fatalf("directory after two saves: %v, %v", ents, err)
	}
}
