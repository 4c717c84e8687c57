package locomo

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the decoder: it must not panic, and
// whatever it accepts must keep the package's promises: every loaded
// question has evidence naming real turns, the counters add up, and every
// unit's qrels judge only memories of the question's conversation.
func FuzzLoad(f *testing.F) {
	for _, p := range []string{"flat/a1.json", "flat/b2.json", "release.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"session_1":[{"dia_id":"D1:1","text":"x"}],"qa":[{"evidence":["D:1:1","D1:01; D1:1",""],"category":9}]}`))
	f.Add([]byte(`[{"sample_id":"conv-1","conversation":{"session_0":[{"dia_id":"D0:0"}]},"observation":{"session_0_observation":{"A":[["t",["D0:0","D"]]]}}}]`))
	f.Add([]byte(`{"session_1_date_time":"12:00 am on 31 February, 2023","session_1":[{"dia_id":"d1:1"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Decode(data, "fuzz.json")
		if err != nil {
			return
		}
		st := d.Stats
		if st.Questions != st.WithEvidence+st.SkippedNoEvidence || st.WithEvidence != len(d.Questions()) {
			t.Fatalf("question counters do not add up: %+v", st)
		}
		if st.EvidenceRepaired+st.DroppedMalformed+st.DroppedDangling+st.DuplicateEvidence > st.EvidenceIDs {
			t.Fatalf("evidence counters exceed ids: %+v", st)
		}
		for _, c := range d.Conversations {
			turns := map[string]bool{}
			for _, s := range c.Sessions {
				if len(s.Turns) == 0 {
					t.Fatalf("%s: session %d without turns", c.ID, s.Index)
				}
				for _, tr := range s.Turns {
					turns[tr.DiaID] = true
				}
			}
			for _, q := range c.Questions {
				if len(q.Evidence) == 0 {
					t.Fatalf("%s: no evidence", q.ID)
				}
				for _, e := range q.Evidence {
					if !turns[e] {
						t.Fatalf("%s: evidence %q names no turn", q.ID, e)
					}
				}
			}
		}
		for _, u := range []Unit{UnitTurn, UnitSession, UnitObservation, UnitSummary} {
			checkQrels(t, u, d.Memories(u), d.Qrels(u))
		}
	})
}
