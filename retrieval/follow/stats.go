package follow

import (
	"context"
	"fmt"

	"github.com/rerankd/rerankd/retrieval/keep"
)

// FollowStats reports the follower's counters.
func (e *Follower) FollowStats() keep.FollowStats {
	st := keep.FollowStats{Builds: e.loads.Load(), Evictions: e.evictions.Load(), Changes: e.caughtUp.Load(),
		SnapshotLoads: e.snapLoads.Load(), SnapshotSaves: e.snapSaves.Load()}
	e.spaces.Each(func(_ string, sp *space) {
		st.Loaded++
		st.Bytes += sp.bytes.Load()
	})
	return st
}

// Ping checks that the shared store can be reached.
func (e *Follower) Ping(ctx context.Context) error {
	if err := e.feed.Ping(ctx); err != nil {
		return fmt.Errorf("%w: %w", keep.ErrUnavailable, err)
	}
	return nil
}
