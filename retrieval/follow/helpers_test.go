package follow_test

import (
	"testing"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/follow"
	"github.com/rerankd/rerankd/retrieval/keep"
)

// followerOf is e's keeper, which over a shared store is the follower.
func followerOf(svc *retrieval.Service) *follow.Follower { return svc.Keeper().(*follow.Follower) }

// space returns ns's indexes if resident (nil when not).
func space(svc *retrieval.Service, ns string) (*keep.Space, error) {
	return followerOf(svc).Space(ns), nil
}

func TestMain(m *testing.M) { pgtest.Main(m) }
