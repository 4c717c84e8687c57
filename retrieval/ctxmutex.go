package retrieval

import (
	"context"
	"sync"
)

// ctxMutex is a mutex whose Lock can give up when a context ends (a search
// waiting behind a long catch-up). The zero value is unlocked.
type ctxMutex struct {
	once sync.Once
	ch   chan struct{}
}

func (m *ctxMutex) c() chan struct{} {
	m.once.Do(func() { m.ch = make(chan struct{}, 1) })
	return m.ch
}

func (m *ctxMutex) Lock()   { m.c() <- struct{}{} }
func (m *ctxMutex) Unlock() { <-m.c() }

// TryLock locks if the mutex is free and reports whether it did.
func (m *ctxMutex) TryLock() bool {
	select {
	case m.c() <- struct{}{}:
		return true
	default:
		return false
	}
}

// LockCtx locks, or returns ctx's error if ctx ends first.
func (m *ctxMutex) LockCtx(ctx context.Context) error {
	select {
	case m.c() <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
