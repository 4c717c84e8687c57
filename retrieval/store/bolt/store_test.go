package bolt

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

func TestOpenLockedAndReadOnly(t *testing.T) {
	s, path := openTemp(t, Options{})
	if err := s.Put(mem("ns", "a"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{LockTimeout: 50 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("second Open err = %v, want lock timeout", err)
	}
	_ = s.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Get("ns", "a"); err != nil {
		t.Fatal(err)
	}
	if err := ro.Put(mem("ns", "b"), nil); err == nil {
		t.Fatal("Put on read-only store succeeded")
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		ok   bool
	}{
		{"zero", Options{}, true},
		{"negative timeout", Options{LockTimeout: -1}, false},
		{"dimension too big", Options{Dimension: store.MaxDimension + 1}, false},
		{"negative dimension", Options{Dimension: -1}, false},
		{"bad mode", Options{FileMode: 0o600 | 1<<31}, false},
	}
	for _, tt := range tests {
		if err := tt.o.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate = %v", tt.name, err)
		}
	}
	if d := (Options{}).withDefaults(); d.NoSync || d.LockTimeout != DefaultLockTimeout || d.FileMode != 0o600 {
		t.Errorf("bad defaults %+v", d)
	}
}

func TestCorruptRecordsDetected(t *testing.T) {
	s, path := openTemp(t, Options{NoSync: true})
	for _, id := range []string{"good", "badvec", "badmem", "shortvec"} {
		if err := s.Put(mem("ns", id), vec(1, 4)); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Close()

	// Write garbage directly through bbolt, bypassing the store.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		emb := tx.Bucket(bucketEmbeddings).Bucket([]byte("ns"))
		good := emb.Get([]byte("good"))
		flipped := append([]byte(nil), good...)
		flipped[len(flipped)-1] ^= 0xff
		if err := emb.Put([]byte("badvec"), flipped); err != nil {
			return err
		}
		if err := emb.Put([]byte("shortvec"), good[:len(good)-4]); err != nil {
			return err
		}
		if err := emb.Put([]byte("orphan"), good); err != nil {
			return err
		}
		return tx.Bucket(bucketMemories).Bucket([]byte("ns")).Put([]byte("badmem"), []byte("\x00garbage"))
	})
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tests := []struct {
		name string
		call func() error
	}{
		{"vector checksum", func() error { _, err := s.Vector("ns", "badvec"); return err }},
		{"vector length", func() error { _, err := s.Vector("ns", "shortvec"); return err }},
		{"memory garbage", func() error { _, err := s.Get("ns", "badmem"); return err }},
		{"list", func() error { return s.List("ns", func(memory.Memory) error { return nil }) }},
		{"foreach", func() error { return s.ForEach(func(store.Record) error { return nil }) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "ns/") {
				t.Fatalf("err = %v, want store.ErrCorrupt naming ns/id", err)
			}
		})
	}
	if _, err := s.Get("ns", "good"); err != nil {
		t.Fatalf("good record unreadable: %v", err)
	}
	var kinds []string
	st, err := s.Check(func(p store.Problem) { kinds = append(kinds, p.Kind+":"+p.ID) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"memory:badmem", "vector:badvec", "orphan-vector:orphan", "vector:shortvec"}
	if !reflect.DeepEqual(kinds, want) || st.Problems != 4 || st.Memories != 4 || st.Vectors != 5 {
		t.Fatalf("Check = %v %+v, want %v", kinds, st, want)
	}
}
