package follow

import (
	"context"
	"fmt"

	"github.com/rerankd/rerankd/retrieval/keep"
)

// FollowStats reports the follower's counters.
func (f *Follower) FollowStats() keep.FollowStats {
	st := keep.FollowStats{Builds: f.loads.Load(), Evictions: f.evictions.Load(), Changes: f.caughtUp.Load(),
		SnapshotLoads: f.snapLoads.Load(), SnapshotSaves: f.snapSaves.Load()}
	f.spaces.Each(func(_ string, sp *space) {
		st.Loaded++
		st.Bytes += sp.bytes.Load()
	})
	return st
}

// Ping checks that the shared store can be reached.
func (f *Follower) Ping(ctx context.Context) error {
	if err := f.feed.Ping(ctx); err != nil {
		return fmt.Errorf("%w: %w", keep.ErrUnavailable, err)
	}
	return nil
}
