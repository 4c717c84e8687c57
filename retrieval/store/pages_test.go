package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// pager serves ids in pages, failing the read after failAfter when set.
type pager struct {
	ids       []string
	failAfter string
	calls     []string
}

func (p *pager) Page(ns, after string, limit int, _ bool) ([]Record, string, error) {
	p.calls = append(p.calls, after)
	if p.failAfter != "" && after == p.failAfter {
		return nil, "", errors.New("read failed")
	}
	i, _ := slices.BinarySearch(p.ids, after)
	if i < len(p.ids) && p.ids[i] == after {
		i++
	}
	var out []Record
	for ; i < len(p.ids) && len(out) < limit; i++ {
		out = append(out, Record{Memory: memory.Memory{Namespace: ns, ID: p.ids[i]}})
	}
	next := ""
	if i < len(p.ids) {
		next = out[len(out)-1].Memory.ID
	}
	return out, next, nil
}

func TestPages(t *testing.T) {
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("m%02d", i)
		}
		return out
	}
	tests := []struct {
		name      string
		n, size   int
		failAfter string
		stopAt    int // pages taken before the caller stops; 0: all
		want      []string
		wantAfter []string // the After of each page yielded
		wantErr   bool
	}{
		{name: "empty", n: 0, size: 3, wantAfter: []string{""}},
		{name: "one short page", n: 2, size: 3, want: ids(2), wantAfter: []string{""}},
		{name: "exact pages", n: 6, size: 3, want: ids(6), wantAfter: []string{"", "m02"}},
		{name: "last page short", n: 7, size: 3, want: ids(7), wantAfter: []string{"", "m02", "m05"}},
		{name: "failed read", n: 7, size: 3, failAfter: "m02", want: ids(3), wantAfter: []string{"", "m02"}, wantErr: true},
		{name: "caller stops", n: 9, size: 3, stopAt: 2, want: ids(6), wantAfter: []string{"", "m02"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &pager{ids: ids(tc.n), failAfter: tc.failAfter}
			var got, afters []string
			var gotErr error
			for pg, err := range Pages(p, "ns", tc.size, false) {
				afters = append(afters, pg.After)
				if err != nil {
					gotErr = err
					continue // the sequence must end by itself
				}
				for _, r := range pg.Records {
					got = append(got, r.Memory.ID)
				}
				if tc.stopAt > 0 && len(afters) == tc.stopAt {
					break
				}
			}
			if !slices.Equal(got, tc.want) || !slices.Equal(afters, tc.wantAfter) || (gotErr != nil) != tc.wantErr {
				t.Fatalf("records %v afters %v err %v; want %v %v err %v", got, afters, gotErr, tc.want, tc.wantAfter, tc.wantErr)
			}
			if len(p.calls) != len(tc.wantAfter) {
				t.Errorf("%d reads, want %d (no read after the end or a stop)", len(p.calls), len(tc.wantAfter))
			}
		})
	}
}
