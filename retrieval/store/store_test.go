package store

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
)

func TestRoundTrip(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true})
	tests := []struct {
		name string
		m    memory.Memory
		v    []float32
	}{
		{"with vector", mem("ns1", "a"), vec(1, 8)},
		{"without vector", mem("ns1", "b"), nil},
		{"unicode text no metadata", memory.Memory{ID: "c", Namespace: "ns:2", Text: "日本語 ✓", Time: time.Now()}, vec(2, 3)},
		{"dim 1", mem("ns1", "d"), []float32{-0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Put(tt.m, tt.v); err != nil {
				t.Fatalf("Put: %v", err)
			}
			got, err := s.Get(tt.m.Namespace, tt.m.ID)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			equalMem(t, got, tt.m)
			gv, err := s.Vector(tt.m.Namespace, tt.m.ID)
			if tt.v == nil {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("Vector err = %v, want ErrNotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Vector: %v", err)
			}
			equalVec(t, gv, tt.v)
		})
	}
}

func TestPutNilVectorRemovesOld(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true})
	m := mem("ns", "a")
	if err := s.Put(m, vec(1, 4)); err != nil {
		t.Fatal(err)
	}
	m.Text = "changed"
	if err := s.Put(m, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Vector("ns", "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("stale vector survived: err = %v", err)
	}
}

func TestNamespaceIsolation(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true})
	for _, it := range []struct{ ns, id string }{{"alice", "x"}, {"alice", "y"}, {"bob", "x"}, {"al", "ice"}} {
		m := mem(it.ns, it.id)
		m.Text = it.ns + "/" + it.id
		if err := s.Put(m, vec(len(it.ns), 2)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		ns      string
		wantIDs []string
	}{
		{"alice", []string{"x", "y"}},
		{"bob", []string{"x"}},
		{"al", []string{"ice"}},
		{"carol", nil},
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			var ids []string
			err := s.List(tt.ns, func(m memory.Memory) error {
				if m.Namespace != tt.ns || m.Text != tt.ns+"/"+m.ID {
					t.Errorf("leaked memory %+v into %s", m, tt.ns)
				}
				ids = append(ids, m.ID)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ids, tt.wantIDs) {
				t.Fatalf("List ids = %v, want %v", ids, tt.wantIDs)
			}
			if n, _ := s.Count(tt.ns); n != len(tt.wantIDs) {
				t.Fatalf("Count = %d, want %d", n, len(tt.wantIDs))
			}
		})
	}
	if _, err := s.Get("bob", "y"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get bob/y err = %v, want ErrNotFound", err)
	}
	if got, _ := s.Get("bob", "x"); got.Text != "bob/x" {
		t.Fatalf("bob/x text = %q", got.Text)
	}
	nss, err := s.Namespaces()
	if err != nil || !reflect.DeepEqual(nss, []string{"al", "alice", "bob"}) {
		t.Fatalf("Namespaces = %v, %v", nss, err)
	}
}

func TestPutBatchAtomic(t *testing.T) {
	tests := []struct {
		name  string
		items func() []Item
		ok    bool
	}{
		{"all valid", func() []Item {
			return []Item{{mem("n", "1"), vec(1, 4)}, {mem("n", "2"), nil}, {mem("m", "3"), vec(3, 4)}}
		}, true},
		{"invalid memory last", func() []Item {
			bad := mem("n", "bad")
			bad.Text = ""
			return []Item{{mem("n", "1"), vec(1, 4)}, {mem("m", "3"), nil}, {bad, nil}}
		}, false},
		{"invalid namespace first", func() []Item {
			return []Item{{mem("../etc", "1"), nil}, {mem("n", "2"), nil}}
		}, false},
		{"NaN vector", func() []Item {
			v := vec(1, 4)
			v[2] = float32(nanF())
			return []Item{{mem("n", "1"), nil}, {mem("n", "2"), v}}
		}, false},
		{"wrong dimension", func() []Item {
			return []Item{{mem("n", "1"), vec(1, 4)}, {mem("n", "2"), vec(1, 5)}}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTemp(t, Options{NoSync: true, Dimension: 4})
			items := tt.items()
			err := s.PutBatch(items)
			if tt.ok {
				if err != nil {
					t.Fatalf("PutBatch: %v", err)
				}
				for _, it := range items {
					if _, err := s.Get(it.Memory.Namespace, it.Memory.ID); err != nil {
						t.Fatalf("Get after batch: %v", err)
					}
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("PutBatch err = %v, want ErrInvalid", err)
			}
			nss, _ := s.Namespaces()
			if len(nss) != 0 {
				t.Fatalf("failed batch wrote namespaces %v", nss)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true})
	for _, id := range []string{"a", "b"} {
		if err := s.Put(mem("ns", id), vec(1, 3)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		ns, id  string
		wantErr error
	}{
		{"ns", "a", nil},
		{"ns", "a", ErrNotFound},
		{"other", "b", ErrNotFound},
		{"ns", "../b", ErrInvalid},
		{"ns", "b", nil},
	}
	for _, tt := range tests {
		err := s.Delete(tt.ns, tt.id)
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
			t.Fatalf("Delete(%s,%s) = %v, want %v", tt.ns, tt.id, err, tt.wantErr)
		}
		if err == nil {
			if _, err := s.Get(tt.ns, tt.id); !errors.Is(err, ErrNotFound) {
				t.Fatalf("memory survived delete: %v", err)
			}
			if _, err := s.Vector(tt.ns, tt.id); !errors.Is(err, ErrNotFound) {
				t.Fatalf("vector survived delete: %v", err)
			}
		}
	}
	if nss, _ := s.Namespaces(); len(nss) != 0 {
		t.Fatalf("empty namespace not removed: %v", nss)
	}
	if st, err := s.Check(nil); err != nil || st.Problems != 0 || st.Vectors != 0 {
		t.Fatalf("Check after delete = %+v, %v", st, err)
	}
}

func TestReopenPersistence(t *testing.T) {
	s, path := openTemp(t, Options{})
	want := map[string][]float32{}
	for i := range 50 {
		id := fmt.Sprintf("m%03d", i)
		want[id] = vec(i, 16)
		if err := s.Put(mem("p", id), want[id]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(mem("p", "late"), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close = %v, want ErrClosed", err)
	}
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	n := 0
	var progress [][2]int
	err = s2.ForEach(func(r Record) error {
		n++
		equalMem(t, r.Memory, mem("p", r.Memory.ID))
		equalVec(t, r.Vector, want[r.Memory.ID])
		return nil
	}, WithProgress(20, func(done, total int) { progress = append(progress, [2]int{done, total}) }))
	if err != nil || n != 50 {
		t.Fatalf("ForEach n=%d err=%v", n, err)
	}
	if !reflect.DeepEqual(progress, [][2]int{{20, 50}, {40, 50}, {50, 50}}) {
		t.Fatalf("progress = %v", progress)
	}
}

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
		{"dimension too big", Options{Dimension: MaxDimension + 1}, false},
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
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
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
		{"foreach", func() error { return s.ForEach(func(Record) error { return nil }) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "ns/") {
				t.Fatalf("err = %v, want ErrCorrupt naming ns/id", err)
			}
		})
	}
	if _, err := s.Get("ns", "good"); err != nil {
		t.Fatalf("good record unreadable: %v", err)
	}
	var kinds []string
	st, err := s.Check(func(p Problem) { kinds = append(kinds, p.Kind+":"+p.ID) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"memory:badmem", "vector:badvec", "orphan-vector:orphan", "vector:shortvec"}
	if !reflect.DeepEqual(kinds, want) || st.Problems != 4 || st.Memories != 4 || st.Vectors != 5 {
		t.Fatalf("Check = %v %+v, want %v", kinds, st, want)
	}
}

func TestListStopsOnCallbackError(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true})
	for _, id := range []string{"a", "b", "c"} {
		if err := s.Put(mem("ns", id), nil); err != nil {
			t.Fatal(err)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := s.List("ns", func(memory.Memory) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("List err=%v n=%d", err, n)
	}
}
