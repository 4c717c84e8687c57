package metrics

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Rank returns a copy of docs in trec_eval's ranking order, with Rank
// renumbered 1..n. The order is score descending, ties broken by docid
// descending in byte order: trec_eval's comp_sim_docno comparator
// (form_res_rels.c). The rank column of the run file plays no part.
// A docid that appears twice is an error naming qid and the docid, as in
// trec_eval ("duplicate docs").
func Rank(qid string, docs []Ranked) ([]Ranked, error) {
	out := slices.Clone(docs)
	slices.SortFunc(out, func(a, b Ranked) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(b.DocID, a.DocID)
	})
	seen := make(map[string]struct{}, len(out))
	for i := range out {
		if _, dup := seen[out[i].DocID]; dup {
			return nil, fmt.Errorf("query %q: duplicate doc %q", qid, out[i].DocID)
		}
		seen[out[i].DocID] = struct{}{}
		out[i].Rank = i + 1
	}
	return out, nil
}
