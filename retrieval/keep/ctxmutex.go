package keep

import (
	"context"
	"sync"
)

// CtxMutex is a mutex whose Lock can give up when a context ends (a search
// waiting behind a long catch-up). The zero value is unlocked.
type CtxMutex struct {
	once sync.Once
	ch   chan struct{}
}

func (m *CtxMutex) c() chan struct{} {
	m.once.Do(func() { m.ch = make(chan struct{}, 1) })
	return m.ch
}

// Lock locks m, waiting as long as it takes (LockCtx gives up).
func (m *CtxMutex) Lock() { m.c() <- struct{}{} }

// Unlock unlocks m, which must be locked.
func (m *CtxMutex) Unlock() { <-m.c() }

// TryLock locks if the mutex is free and reports whether it did.
func (m *CtxMutex) TryLock() bool {
	select {
	case m.c() <- struct{}{}:
		return true
	default:
		return false
	}
}

// LockCtx locks, or returns ctx's error if ctx ends first.
func (m *CtxMutex) LockCtx(ctx context.Context) error {
	select {
	case m.c() <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
