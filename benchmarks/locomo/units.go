package locomo

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Unit is the retrieval granularity: what one Memory holds.
type Unit int

// Units. UnitTurn, the zero value, is the default.
const (
	// UnitTurn is one memory per dialog turn: DocID "<conv>/D<s>:<t>".
	UnitTurn Unit = iota
	// UnitSession is one memory per session, its turns joined by
	// newlines: DocID "<conv>/S<s>".
	UnitSession
	// UnitObservation is one memory per LoCoMo observation (a generated
	// fact linked to turns): DocID "<conv>/O<s>:<k>", k counting from 1
	// within the session. An observation is relevant to a question when
	// it links to one of the question's evidence turns.
	UnitObservation
	// UnitSummary is one memory per session summary: DocID
	// "<conv>/Sum<s>", relevant when its session holds evidence.
	UnitSummary
)

var unitNames = []string{"turn", "session", "observation", "summary"}

// String returns the unit's name: "turn", "session", "observation" or
// "summary".
func (u Unit) String() string {
	if u >= 0 && int(u) < len(unitNames) {
		return unitNames[u]
	}
	return "unit(" + strconv.Itoa(int(u)) + ")"
}

// ParseUnit is String's inverse, for flags.
func ParseUnit(s string) (Unit, error) {
	for i, n := range unitNames {
		if s == n {
			return Unit(i), nil
		}
	}
	return 0, fmt.Errorf("locomo: unknown unit %q (want one of %s)", s, strings.Join(unitNames, ", "))
}

// Memory is one retrieval unit.
type Memory struct {
	DocID   string
	ConvID  string
	Session int
	Text    string
	Time    time.Time // the session's; zero if its date did not parse
	// Speaker is who said the turn, or whom the observation is about;
	// empty for sessions and summaries, which have both speakers.
	Speaker string
}

// TurnText renders a turn as a memory's text: "Speaker: text", plus
// " [shares an image: caption]" when the turn shared an image.
func TurnText(t Turn) string {
	s := t.Text
	if t.Speaker != "" {
		s = t.Speaker + ": " + s
	}
	if t.ImageCaption != "" {
		s += " [shares an image: " + t.ImageCaption + "]"
	}
	return s
}

// TurnDocID is the DocID of turn diaID in conversation conv.
func TurnDocID(conv, diaID string) string { return conv + "/" + diaID }

// SessionDocID is the DocID of session n in conversation conv.
func SessionDocID(conv string, n int) string { return conv + "/S" + strconv.Itoa(n) }

// ObservationDocID is the DocID of the k-th (from 1) observation of
// session n in conversation conv.
func ObservationDocID(conv string, n, k int) string {
	return conv + "/O" + strconv.Itoa(n) + ":" + strconv.Itoa(k)
}

// SummaryDocID is the DocID of session n's summary in conversation conv.
func SummaryDocID(conv string, n int) string { return conv + "/Sum" + strconv.Itoa(n) }

// Memories returns the conversation's memories at unit u, in dialog order.
// An unknown unit gives none.
func (c *Conversation) Memories(u Unit) []Memory {
	var out []Memory
	for _, s := range c.Sessions {
		mem := func(id, text, speaker string) Memory {
			return Memory{DocID: id, ConvID: c.ID, Session: s.Index, Text: text, Time: s.Time, Speaker: speaker}
		}
		switch u {
		case UnitTurn:
			for _, t := range s.Turns {
				out = append(out, mem(TurnDocID(c.ID, t.DiaID), TurnText(t), t.Speaker))
			}
		case UnitSession:
			lines := make([]string, len(s.Turns))
			for i, t := range s.Turns {
				lines[i] = TurnText(t)
			}
			out = append(out, mem(SessionDocID(c.ID, s.Index), strings.Join(lines, "\n"), ""))
		case UnitObservation:
			for k, o := range s.Observations {
				out = append(out, mem(ObservationDocID(c.ID, s.Index, k+1), o.Text, o.Speaker))
			}
		case UnitSummary:
			if s.Summary != "" {
				out = append(out, mem(SummaryDocID(c.ID, s.Index), s.Summary, ""))
			}
		}
	}
	return out
}

// Memories returns every conversation's memories at unit u. LoCoMo
// retrieval is per conversation: search a question only among the
// memories with its ConvID.
func (d *Dataset) Memories(u Unit) []Memory {
	var out []Memory
	for i := range d.Conversations {
		out = append(out, d.Conversations[i].Memories(u)...)
	}
	return out
}

// Questions returns every conversation's questions.
func (d *Dataset) Questions() []Question {
	var out []Question
	for _, c := range d.Conversations {
		out = append(out, c.Questions...)
	}
	return out
}

// Qrels returns the relevance judgments at unit u: question ID -> DocID ->
// 1. A question with no relevant memory at u (possible for observations
// and summaries only) has no entry, as trec_eval skips such queries.
func (d *Dataset) Qrels(u Unit) map[string]map[string]int {
	out := make(map[string]map[string]int)
	for i := range d.Conversations {
		c := &d.Conversations[i]
		var obsByTurn map[string][]string
		if u == UnitObservation {
			obsByTurn = make(map[string][]string)
			for _, s := range c.Sessions {
				for k, o := range s.Observations {
					for _, dia := range o.DiaIDs {
						obsByTurn[dia] = append(obsByTurn[dia], ObservationDocID(c.ID, s.Index, k+1))
					}
				}
			}
		}
		var hasSummary map[int]bool
		if u == UnitSummary {
			hasSummary = make(map[int]bool)
			for _, s := range c.Sessions {
				hasSummary[s.Index] = s.Summary != ""
			}
		}
		for _, q := range c.Questions {
			rel := make(map[string]int)
			for _, dia := range q.Evidence {
				_, n, _, _ := parseDiaID(dia)
				switch u {
				case UnitTurn:
					rel[TurnDocID(c.ID, dia)] = 1
				case UnitSession:
					rel[SessionDocID(c.ID, n)] = 1
				case UnitObservation:
					for _, id := range obsByTurn[dia] {
						rel[id] = 1
					}
				case UnitSummary:
					if hasSummary[n] {
						rel[SummaryDocID(c.ID, n)] = 1
					}
				}
			}
			if len(rel) > 0 {
				out[q.ID] = rel
			}
		}
	}
	return out
}
