package keep

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestSpaces: Create makes a namespace's state once however many ask at
// the same time, returns the maker's error without storing anything, and
// Drop forgets only the state it was given.
func TestSpaces(t *testing.T) {
	var s Spaces[*int]
	n := 0
	var wg sync.WaitGroup
	got := make([]*int, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := s.Create("a", func() (*int, error) { n++; x := n; return &x, nil })
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		}()
	}
	wg.Wait()
	for _, v := range got {
		if v != got[0] {
			t.Fatal("two states made for one namespace")
		}
	}
	boom := errors.New("boom")
	if _, err := s.Create("b", func() (*int, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("Create's error: %v", err)
	}
	if _, ok := s.Get("b"); ok {
		t.Fatal("a failed Create stored a state")
	}
	other := new(int)
	s.Drop("a", other)
	if v, _ := s.Get("a"); v != got[0] {
		t.Fatal("Drop of another state forgot the namespace")
	}
	s.SetLocked("c", other)
	if names := s.Names(); !slices.Equal(names, []string{"a", "c"}) {
		t.Fatalf("Names = %v", names)
	}
	s.Drop("a", got[0])
	if _, ok := s.Get("a"); ok {
		t.Fatal("Drop kept the namespace")
	}
}

// TestCtxMutex: LockCtx gives up when its context ends, TryLock does not
// wait, and Unlock lets the next one in.
func TestCtxMutex(t *testing.T) {
	var m CtxMutex
	m.Lock()
	if m.TryLock() {
		t.Fatal("TryLock of a held mutex")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := m.LockCtx(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LockCtx of a held mutex: %v", err)
	}
	m.Unlock()
	if err := m.LockCtx(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.Unlock()
	if !m.TryLock() {
		t.Fatal("TryLock of a free mutex")
	}
	m.Unlock()
}

// TestShutdown: Shutdown marks the base closed under the fence, stops
// and waits for the background work, and cancels Context.
func TestShutdown(t *testing.T) {
	b := NewBase(nil, nil, 0, Common{}, nil)
	var s Spaces[*int]
	stopped := false
	b.Go(func() {
		<-b.Stopping()
		time.Sleep(10 * time.Millisecond)
		stopped = true
	})
	if b.Ready() {
		t.Fatal("ready before the build ended")
	}
	b.Built(nil)
	if err := b.Wait(context.Background()); err != nil || !b.Ready() {
		t.Fatalf("after Built: %v, ready %v", err, b.Ready())
	}
	b.Shutdown(&s)
	if !b.Closed() || !stopped || b.Context().Err() == nil {
		t.Fatalf("after Shutdown: closed %v, background stopped %v, ctx %v", b.Closed(), stopped, b.Context().Err())
	}
}
