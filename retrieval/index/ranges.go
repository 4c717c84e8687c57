package index

import (
	"cmp"
	"time"

	"github.com/google/btree"

	"github.com/rerankd/rerankd/retrieval/filter"
)

// ranges keeps, sorted, the values that range filters read: every
// memory's time, and for each metadata key its numbers and its strings
// holding times (filter.ParseTime). A range condition's memories are then
// found by a search of the sorted order (logarithmic, then one step per
// memory in the range) rather than by reading every memory. attrs holds
// it under its lock.
type ranges struct {
	time  *btree.BTreeG[timeEntry]
	nums  map[string]*btree.BTreeG[numEntry]
	times map[string]*btree.BTreeG[timeEntry]
}

// btreeDegree is the B-trees' degree (nodes hold up to 2*degree-1
// entries).
const btreeDegree = 32

// numEntry is one memory's number under one key; ties by ID.
type numEntry struct {
	v  float64
	id string
}

func numLess(a, b numEntry) bool {
	if a.v != b.v {
		return a.v < b.v
	}
	return a.id < b.id
}

// timeEntry is one memory's time (seconds and nanoseconds since the Unix
// epoch: an instant, whatever the zone it was written in); ties by ID.
type timeEntry struct {
	sec  int64
	nsec int32
	id   string
}

func timeEntryOf(t time.Time, id string) timeEntry {
	return timeEntry{sec: t.Unix(), nsec: int32(t.Nanosecond()), id: id}
}

// cmpInstant compares the instants of a and b, not their IDs.
func cmpInstant(a, b timeEntry) int {
	if c := cmp.Compare(a.sec, b.sec); c != 0 {
		return c
	}
	return cmp.Compare(a.nsec, b.nsec)
}

func timeLess(a, b timeEntry) bool {
	if c := cmpInstant(a, b); c != 0 {
		return c < 0
	}
	return a.id < b.id
}

func newRanges() ranges {
	return ranges{time: btree.NewG(btreeDegree, timeLess), nums: map[string]*btree.BTreeG[numEntry]{},
		times: map[string]*btree.BTreeG[timeEntry]{}}
}

// put adds the entries of memory id, whose fields are f.
func (r *ranges) put(id string, f *filter.Fields) {
	r.each(id, f, func(key string, n *numEntry, t *timeEntry) {
		switch {
		case n != nil:
			tr := r.nums[key]
			if tr == nil {
				tr = btree.NewG(btreeDegree, numLess)
				r.nums[key] = tr
			}
			tr.ReplaceOrInsert(*n)
		case key == "" && t != nil:
			r.time.ReplaceOrInsert(*t)
		default:
			tr := r.times[key]
			if tr == nil {
				tr = btree.NewG(btreeDegree, timeLess)
				r.times[key] = tr
			}
			tr.ReplaceOrInsert(*t)
		}
	})
}

// remove deletes the entries of memory id, whose fields were f.
func (r *ranges) remove(id string, f *filter.Fields) {
	r.each(id, f, func(key string, n *numEntry, t *timeEntry) {
		switch {
		case n != nil:
			if tr := r.nums[key]; tr != nil {
				tr.Delete(*n)
				if tr.Len() == 0 {
					delete(r.nums, key)
				}
			}
		case key == "" && t != nil:
			r.time.Delete(*t)
		default:
			if tr := r.times[key]; tr != nil {
				tr.Delete(*t)
				if tr.Len() == 0 {
					delete(r.times, key)
				}
			}
		}
	})
}

// each calls fn with each entry of memory id: its time (key ""), then
// each metadata number (n set) and time string (t set) under its key.
// Metadata keys are never "" (memory.Validate).
func (r *ranges) each(id string, f *filter.Fields, fn func(key string, n *numEntry, t *timeEntry)) {
	if !f.Time.IsZero() {
		e := timeEntryOf(f.Time, id)
		fn("", nil, &e)
	}
	for k, v := range f.Metadata {
		if k == "" {
			continue
		}
		if x, ok := v.Num(); ok {
			fn(k, &numEntry{v: x, id: id}, nil)
		} else if s, ok := v.Str(); ok {
			if t, ok := filter.ParseTime(s); ok {
				e := timeEntryOf(t, id)
				fn(k, nil, &e)
			}
		}
	}
}

// in calls fn with the ID of each memory whose value lies in iv, in the
// order of the values, until fn returns false. It holds every memory that
// iv's condition accepts: numbers for numeric bounds, times for time
// bounds (the time field, or a metadata key's time strings).
func (r *ranges) in(iv filter.Interval, fn func(id string) bool) {
	if !iv.Times {
		tr := r.nums[iv.Key]
		if iv.Time || tr == nil {
			return
		}
		visit := func(e numEntry) bool {
			if iv.Lo.Set && iv.Lo.Strict && e.v == iv.Lo.N {
				return true
			}
			if iv.Hi.Set && (e.v > iv.Hi.N || (iv.Hi.Strict && e.v == iv.Hi.N)) {
				return false
			}
			return fn(e.id)
		}
		if iv.Lo.Set {
			tr.AscendGreaterOrEqual(numEntry{v: iv.Lo.N}, visit) // "" sorts before every ID
		} else {
			tr.Ascend(visit)
		}
		return
	}
	tr := r.time
	if !iv.Time {
		tr = r.times[iv.Key]
	}
	if tr == nil {
		return
	}
	lo, hi := timeEntryOf(iv.Lo.T, ""), timeEntryOf(iv.Hi.T, "")
	visit := func(e timeEntry) bool {
		if iv.Lo.Set && iv.Lo.Strict && cmpInstant(e, lo) == 0 {
			return true
		}
		if iv.Hi.Set {
			if c := cmpInstant(e, hi); c > 0 || (c == 0 && iv.Hi.Strict) {
				return false
			}
		}
		return fn(e.id)
	}
	if iv.Lo.Set {
		tr.AscendGreaterOrEqual(lo, visit)
	} else {
		tr.Ascend(visit)
	}
}

// len is the number of entries, for Set.Bytes.
func (r *ranges) len() int {
	n := r.time.Len()
	for _, tr := range r.nums {
		n += tr.Len()
	}
	for _, tr := range r.times {
		n += tr.Len()
	}
	return n
}
