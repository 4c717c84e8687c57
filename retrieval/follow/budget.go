package follow

import (
	"slices"
)

// enforceBudget drops least recently used namespaces, never keep, while
// the estimated total exceeds Config.Follow.IndexMemory.
func (f *Follower) enforceBudget(keep string) {
	if f.conf.IndexMemory <= 0 {
		return
	}
	type entry struct {
		ns    string
		sp    *space
		used  int64
		bytes int64
	}
	var all []entry
	var total int64
	f.spaces.Each(func(ns string, sp *space) {
		b := sp.bytes.Load()
		total += b
		all = append(all, entry{ns, sp, sp.lastUse.Load(), b})
	})
	if total <= f.conf.IndexMemory {
		return
	}
	slices.SortFunc(all, func(a, b entry) int { return int(min(max(a.used-b.used, -1), 1)) })
	for _, en := range all {
		if total <= f.conf.IndexMemory {
			break
		}
		if en.ns == keep {
			continue
		}
		select {
		case <-en.sp.loaded:
		default:
			continue // still building: its first user is waiting for it
		}
		f.drop(en.ns, en.sp)
		f.evictions.Add(1)
		total -= en.bytes
	}
}
