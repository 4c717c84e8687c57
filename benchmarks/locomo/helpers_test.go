package locomo

import "testing"

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkQrels checks that DocIDs are unique and every judged DocID is a
// memory of the question's conversation.
func checkQrels(tb testing.TB, u Unit, mems []Memory, qrels map[string]map[string]int) {
	tb.Helper()
	conv := make(map[string]string, len(mems))
	for _, m := range mems {
		if _, dup := conv[m.DocID]; dup {
			tb.Errorf("%s: duplicate DocID %s", u, m.DocID)
		}
		conv[m.DocID] = m.ConvID
	}
	for qid, rel := range qrels {
		if len(rel) == 0 {
			tb.Errorf("%s: %s has an empty judgment set", u, qid)
		}
		for id, g := range rel {
			c, ok := conv[id]
			if !ok || g != 1 {
				tb.Errorf("%s: %s judges %s (grade %d), not a memory", u, qid, id, g)
				continue
			}
			if want := c + "/Q"; len(qid) < len(want) || qid[:len(want)] != want {
				tb.Errorf("%s: %s judges %s of another conversation", u, qid, id)
			}
		}
	}
}
