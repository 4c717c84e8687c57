package locomo

import (
	"strconv"
	"strings"
)

// maxIndex bounds session and turn numbers, so that odd input cannot make
// huge numbers (the real data stays below 100).
const maxIndex = 1_000_000

// parseDiaID reads a dia_id leniently and returns its canonical form
// "D<session>:<turn>". Accepted beyond the canonical form: surrounding
// spaces, a lowercase or missing "D", a stray colon after the "D"
// ("D:11:26") and zero padding ("D30:05"). Everything else ("D", "D1",
// "D1:2:3") is rejected. Whether the result names a real turn is the
// caller's business.
func parseDiaID(s string) (canon string, session, turn int, ok bool) {
	t := strings.TrimSpace(s)
	if len(t) > 0 && (t[0] == 'D' || t[0] == 'd') {
		t = t[1:]
	}
	t = strings.TrimPrefix(t, ":")
	a, b, found := strings.Cut(t, ":")
	if !found {
		return "", 0, 0, false
	}
	session, ok1 := parseIndex(a)
	turn, ok2 := parseIndex(b)
	if !ok1 || !ok2 {
		return "", 0, 0, false
	}
	return diaID(session, turn), session, turn, true
}

func diaID(session, turn int) string {
	return "D" + strconv.Itoa(session) + ":" + strconv.Itoa(turn)
}

// parseIndex reads a non-empty run of ASCII digits, at most maxIndex.
func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 12 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= maxIndex
}

// splitIDs splits an evidence string that holds several ids
// ("D8:6; D9:17") on semicolons, commas and white space.
func splitIDs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ';' || r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
}

// resolveEvidence applies the quirk policy to one question's raw evidence
// list: split, parse, repair, check against the conversation's turns,
// deduplicate. It returns the canonical ids kept, in order, and counts
// every id's fate in st.
func resolveEvidence(raw []string, turns map[string]bool, st *Stats) []string {
	var out []string
	seen := make(map[string]bool, len(raw))
	for _, r := range raw {
		parts := splitIDs(r)
		split := len(parts) > 1
		if split {
			st.EvidenceSplit++
		}
		if len(parts) == 0 { // "" or only separators
			st.EvidenceIDs++
			st.DroppedMalformed++
			continue
		}
		for _, p := range parts {
			st.EvidenceIDs++
			canon, _, _, ok := parseDiaID(p)
			rewritten := canon != p
			switch {
			case !ok:
				st.DroppedMalformed++
			case !turns[canon] && rewritten:
				// A guess that names no turn is no repair.
				st.DroppedMalformed++
			case !turns[canon]:
				st.DroppedDangling++
			case seen[canon]:
				st.DuplicateEvidence++
			default:
				if split || rewritten {
					st.EvidenceRepaired++
				}
				seen[canon] = true
				out = append(out, canon)
			}
		}
	}
	return out
}

// resolveLinks keeps the ids in an observation's link list that name turns,
// without the question counters: observations are secondary data.
func resolveLinks(raw []string, turns map[string]bool) (kept []string, dropped int) {
	seen := make(map[string]bool)
	for _, r := range raw {
		parts := splitIDs(r)
		if len(parts) == 0 {
			dropped++
		}
		for _, p := range parts {
			canon, _, _, ok := parseDiaID(p)
			switch {
			case !ok || !turns[canon]:
				dropped++
			case !seen[canon]:
				seen[canon] = true
				kept = append(kept, canon)
			}
		}
	}
	return kept, dropped
}
