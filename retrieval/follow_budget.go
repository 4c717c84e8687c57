package retrieval

import (
	"slices"
)

// drop forgets sp if it is still ns's space: the next use builds anew.
func (e *follower) drop(ns string, sp *space) {
	e.mu.Lock()
	if e.spaces[ns] == sp {
		delete(e.spaces, ns)
	}
	e.mu.Unlock()
}

// enforceBudget drops least recently used namespaces, never keep, while
// the estimated total exceeds Config.Follow.IndexMemory.
func (e *follower) enforceBudget(keep string) {
	if e.cfg.Follow.IndexMemory <= 0 {
		return
	}
	type entry struct {
		ns    string
		sp    *space
		used  int64
		bytes int64
	}
	e.mu.RLock()
	var all []entry
	var total int64
	for ns, sp := range e.spaces {
		b := sp.follow.bytes.Load()
		total += b
		all = append(all, entry{ns, sp, sp.follow.lastUse.Load(), b})
	}
	e.mu.RUnlock()
	if total <= e.cfg.Follow.IndexMemory {
		return
	}
	slices.SortFunc(all, func(a, b entry) int { return int(min(max(a.used-b.used, -1), 1)) })
	for _, en := range all {
		if total <= e.cfg.Follow.IndexMemory {
			break
		}
		if en.ns == keep {
			continue
		}
		select {
		case <-en.sp.follow.loaded:
		default:
			continue // still building: its first user is waiting for it
		}
		e.drop(en.ns, en.sp)
		e.evictions.Add(1)
		total -= en.bytes
	}
}
