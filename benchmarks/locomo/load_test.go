package locomo

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustLoad(tb testing.TB, path string) *Dataset {
	tb.Helper()
	d, err := Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// The fixtures hold the same two invented conversations in both layouts.
func TestLoadLayoutsAgree(t *testing.T) {
	dir := mustLoad(t, filepath.Join("testdata", "flat"))
	rel := mustLoad(t, filepath.Join("testdata", "release.json"))
	if !reflect.DeepEqual(dir, rel) {
		t.Errorf("directory and release layouts differ:\n dir %+v\n rel %+v", dir, rel)
	}
	one := mustLoad(t, filepath.Join("testdata", "flat", "a1.json"))
	if len(one.Conversations) != 1 || !reflect.DeepEqual(one.Conversations[0], dir.Conversations[0]) {
		t.Errorf("a1.json alone: %+v, want %+v", one.Conversations, dir.Conversations[:1])
	}
}

func TestLoadStats(t *testing.T) {
	got := mustLoad(t, filepath.Join("testdata", "flat")).Stats
	want := Stats{
		Conversations: 2, Sessions: 4, Turns: 8, ImageTurns: 2, Observations: 5,
		SessionsWithoutTurns: 1, UnparsedTimes: 1, ObservationLinksDropped: 1,
		Questions: 9, WithEvidence: 7, SkippedNoEvidence: 2,
		EvidenceIDs: 15, EvidenceSplit: 1, EvidenceRepaired: 3,
		DroppedMalformed: 3, DroppedDangling: 2, DuplicateEvidence: 2,
		Categories: map[Category]CategoryStats{
			CategoryMultiHop:    {2, 1},
			CategoryTemporal:    {1, 1},
			CategoryOpenDomain:  {1, 0},
			CategorySingleHop:   {3, 3},
			CategoryAdversarial: {1, 1},
			7:                   {1, 1},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stats\n got %+v\nwant %+v", got, want)
	}
}

func TestLoadContent(t *testing.T) {
	d := mustLoad(t, filepath.Join("testdata", "flat"))
	a1, b2 := d.Conversations[0], d.Conversations[1]
	if a1.ID != "a1" || b2.ID != "b2" || a1.SpeakerA != "Ada" || a1.SpeakerB != "Bo" {
		t.Fatalf("conversations %q (%s, %s), %q", a1.ID, a1.SpeakerA, a1.SpeakerB, b2.ID)
	}
	if len(a1.Sessions) != 2 || a1.Sessions[0].Index != 1 || a1.Sessions[1].Index != 2 {
		t.Fatalf("a1 sessions %+v, want 1 and 2 (3 has a date only)", a1.Sessions)
	}
	s1 := a1.Sessions[0]
	if want := time.Date(2023, time.May, 8, 13, 56, 0, 0, time.UTC); !s1.Time.Equal(want) || s1.RawTime != "1:56 pm on 8 May, 2023" {
		t.Errorf("session 1 time %v (raw %q), want %v", s1.Time, s1.RawTime, want)
	}
	if want := (Turn{DiaID: "D1:2", Speaker: "Bo", Text: "Look at my new bike!", ImageCaption: "a photo of a red bicycle"}); s1.Turns[1] != want {
		t.Errorf("turn D1:2 = %+v, want %+v", s1.Turns[1], want)
	}
	if s1.Summary != "Ada and Bo talked about a cat and a bike." {
		t.Errorf("summary %q", s1.Summary)
	}
	wantObs := []Observation{
		{"Ada", "Ada adopted a cat named Pixel.", []string{"D1:1"}},
		{"Ada", "Ada asked Bo about riding.", []string{"D1:3", "D1:2"}},
		{"Bo", "Bo has a red bicycle.", []string{"D1:2"}},
	}
	if !reflect.DeepEqual(s1.Observations, wantObs) {
		t.Errorf("observations %+v, want %+v (speaker_a first)", s1.Observations, wantObs)
	}
	if got := a1.Sessions[1].Observations[0].DiaIDs; !equal(got, []string{"D2:2"}) {
		t.Errorf("comma-joined observation links %v, want [D2:2] (D9:1 names no turn)", got)
	}
	if b := b2.Sessions[1]; !b.Time.IsZero() || b.RawTime != "sometime in spring" {
		t.Errorf("unparseable date: time %v raw %q, want zero and the raw text", b.Time, b.RawTime)
	}

	wantQ := []Question{
		{ID: "a1/Q0", Text: "What is the name of Ada's cat?", Answer: "Pixel", Category: 4, Evidence: []string{"D1:1"}},
		{ID: "a1/Q1", Text: "Where did Bo ride after buying the bike?", Answer: "To the lake", Category: 1, Evidence: []string{"D1:2", "D2:1"}},
		{ID: "a1/Q2", Text: "When did Bo ride to the lake?", Answer: "The Sunday before 19 June 2023", Category: 2, Evidence: []string{"D2:1"}},
		{ID: "a1/Q3", Text: "How many cats does Ada have?", Answer: "1", Category: 4, Evidence: []string{"D1:1"}},
		{ID: "a1/Q5", Text: "What color is Ada's bike?", Answer: "red", AdversarialAnswer: "red", Category: 5, Evidence: []string{"D1:2"}},
	}
	for i := range wantQ {
		wantQ[i].ConvID = "a1"
	}
	if !reflect.DeepEqual(a1.Questions, wantQ) {
		t.Errorf("questions\n got %+v\nwant %+v", a1.Questions, wantQ)
	}
	if n := len(d.Questions()); n != 7 {
		t.Errorf("Dataset.Questions: %d, want 7", n)
	}
}

// Odd input that is still usable loads, with the oddity counted.
func TestDecodeOdd(t *testing.T) {
	tests := []struct {
		name  string
		json  string
		check func(*testing.T, *Dataset)
	}{
		{"byte order mark and nulls", "\ufeff" + `{"speaker_a": null, "session_1": [{"speaker":"A","dia_id":"D1:1","text":"hi"}], "session_1_date_time": null, "qa": null}`,
			func(t *testing.T, d *Dataset) {
				if d.Stats.Turns != 1 || d.Conversations[0].Sessions[0].RawTime != "" {
					t.Errorf("got %+v", d.Conversations[0])
				}
			}},
		{"bad, duplicate and misplaced turn ids dropped", `{"session_1": [
			{"dia_id":"D1:1","text":"a"}, {"dia_id":"D1:1","text":"dup"}, {"dia_id":"x","text":"b"},
			{"dia_id":"D2:1","text":"wrong session"}, {"dia_id":"D1:02","text":"padded"}]}`,
			func(t *testing.T, d *Dataset) {
				turns := d.Conversations[0].Sessions[0].Turns
				if d.Stats.TurnsDropped != 3 || len(turns) != 2 || turns[1].DiaID != "D1:2" {
					t.Errorf("dropped %d, turns %+v", d.Stats.TurnsDropped, turns)
				}
			}},
		{"empty session", `{"session_1": [], "session_1_date_time": "8 May 2023"}`,
			func(t *testing.T, d *Dataset) {
				if d.Stats.SessionsWithoutTurns != 1 || len(d.Conversations[0].Sessions) != 0 {
					t.Errorf("got %+v", d.Conversations[0])
				}
			}},
		{"numeric sample id, missing sample id", `[{"sample_id": 7, "conversation": {}}, {"conversation": {}}]`,
			func(t *testing.T, d *Dataset) {
				if d.Conversations[0].ID != "7" || d.Conversations[1].ID != "1" {
					t.Errorf("ids %q %q, want 7 and 1 (the list position)", d.Conversations[0].ID, d.Conversations[1].ID)
				}
			}},
		{"release sample as an object", `{"sample_id": "conv-9", "conversation": {"session_1": [{"dia_id":"D1:1","text":"x"}]},
			"qa": [{"question":"q","answer":"a","evidence":["D1:1"],"category":1}]}`,
			func(t *testing.T, d *Dataset) {
				if c := d.Conversations[0]; c.ID != "9" || len(c.Questions) != 1 || c.Questions[0].ID != "9/Q0" {
					t.Errorf("got %+v", c)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decode([]byte(tc.json), "x.json")
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, d)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"empty", ``, "not a JSON object or list"},
		{"scalar", `42`, "not a JSON object or list"},
		{"truncated", `{"qa": [`, "unexpected end"},
		{"qa not a list", `{"qa": 3}`, "qa:"},
		{"session not a list", `{"session_1": {}}`, "session_1:"},
		{"speaker not a string", `{"speaker_a": 1}`, "speaker_a:"},
		{"category not a number", `{"qa": [{"category": "1"}]}`, "qa:"},
		{"answer an object", `{"session_1":[{"dia_id":"D1:1"}], "qa": [{"answer": {}, "evidence": ["D1:1"]}]}`, "qa[0]: answer"},
		{"observation item", `{"session_1":[{"dia_id":"D1:1"}], "session_1_observation": {"A": [["only text"]]}}`, "session_1_observation: A[0]"},
		{"sample not an object", `[1]`, "x.json"},
		{"conversation not an object", `[{"conversation": []}]`, "sample 0 (0): conversation"},
		{"duplicate ids", `[{"sample_id": "a", "conversation": {}}, {"sample_id": "a", "conversation": {}}]`, "conversation a already loaded from x.json"},
		{"id with a slash", `[{"sample_id": "a/b", "conversation": {}}]`, "bad conversation id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.json), "x.json")
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || !strings.Contains(msg, "x.json") {
				t.Errorf("error %q, want it to name x.json and contain %q", msg, tc.want)
			}
		})
	}
}

func TestLoadPathErrors(t *testing.T) {
	empty := t.TempDir()
	dup := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "flat", "a1.json"))
	if err != nil {
		t.Fatal(err)
	}
	// b.json's release sample reuses a1.json's ID (its stem).
	if err := os.WriteFile(filepath.Join(dup, "a1.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dup, "b.json"), []byte(`[{"sample_id":"a1","conversation":{}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, want string }{
		{"missing", filepath.Join(empty, "nope"), "nope"},
		{"no json files", empty, "no .json files"},
		{"duplicate conversation", dup, "already loaded from " + filepath.Join(dup, "a1.json")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load(%s) error %v, want %q", tc.path, err, tc.want)
			}
		})
	}
}
