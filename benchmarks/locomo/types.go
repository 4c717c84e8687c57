package locomo

import (
	"fmt"
	"time"
)

// Dataset is a loaded LoCoMo split: its conversations, in load order (files
// sorted by name, then the order inside each file), and what loading found.
type Dataset struct {
	Conversations []Conversation
	Stats         Stats
}

// Conversation is one long two-speaker dialog and the questions asked about
// it. ID is the file's stem ("26" for 26.json) or the release's sample_id
// with its "conv-" prefix removed, so both layouts give the same IDs.
type Conversation struct {
	ID       string
	SpeakerA string
	SpeakerB string
	// Sessions holds the sessions that have turns, ordered by Index.
	Sessions []Session
	// Questions holds the questions left with at least one evidence turn
	// after repair; see Stats for the others.
	Questions []Question
}

// Session is one dated chat session.
type Session struct {
	Index int // N in session_N, 1-based in the data
	// Time is RawTime parsed (see ParseTime), in UTC since the data carries
	// no zone; zero when RawTime is absent or unparseable.
	Time    time.Time
	RawTime string
	Turns   []Turn
	// Observations and Summary come from session_N_observation and
	// session_N_summary when the files carry them (the dev split does).
	Observations []Observation
	Summary      string
}

// Turn is one dialog turn. DiaID is canonical: "D<session>:<turn>".
type Turn struct {
	DiaID        string
	Speaker      string
	Text         string
	ImageCaption string // the BLIP caption of a shared image, if any
}

// Observation is one LoCoMo "observation": a generated fact about a
// speaker, linked to the turns it was drawn from.
type Observation struct {
	Speaker string
	Text    string
	DiaIDs  []string // canonical, existing turns only
}

// Question is one QA item.
type Question struct {
	// ID is ConvID + "/Q" + the item's 0-based position in the file's qa
	// list ("26/Q37" is qa[37] of 26.json), so it stays put when other
	// questions are skipped and can be checked against the raw file.
	ID     string
	ConvID string
	Text   string
	// Answer is "answer", or "adversarial_answer" when "answer" is absent
	// (category 5); numbers are kept as their JSON text.
	Answer            string
	AdversarialAnswer string
	Category          Category
	// Evidence lists the canonical dia_ids of the evidence turns, after
	// repair, deduplicated, in the data's order; never empty.
	Evidence []string
}

// Category is LoCoMo's question type.
type Category int

// The five LoCoMo categories, numbered as in the data.
const (
	CategoryMultiHop    Category = 1
	CategoryTemporal    Category = 2
	CategoryOpenDomain  Category = 3
	CategorySingleHop   Category = 4
	CategoryAdversarial Category = 5
)

// Categories lists the five known categories in numeric order.
func Categories() []Category {
	return []Category{CategoryMultiHop, CategoryTemporal, CategoryOpenDomain, CategorySingleHop, CategoryAdversarial}
}

// String names the category ("multi-hop", ...), or "category(N)" if unknown.
func (c Category) String() string {
	switch c {
	case CategoryMultiHop:
		return "multi-hop"
	case CategoryTemporal:
		return "temporal"
	case CategoryOpenDomain:
		return "open-domain"
	case CategorySingleHop:
		return "single-hop"
	case CategoryAdversarial:
		return "adversarial"
	}
	return fmt.Sprintf("category(%d)", int(c))
}

// Stats counts what loading saw and what the quirk policy did (see the
// package documentation). Evidence counters are per id after splitting, so
// EvidenceIDs = kept as-is + EvidenceRepaired + DroppedMalformed +
// DroppedDangling + DuplicateEvidence.
type Stats struct {
	Conversations int
	Sessions      int // sessions with turns
	Turns         int
	ImageTurns    int // turns with an image caption
	Observations  int

	// SessionsWithoutTurns counts sessions that have a date (or an empty
	// turn list) but no turns; they are not loaded.
	SessionsWithoutTurns int
	UnparsedTimes        int // session date-times ParseTime rejected
	// TurnsDropped counts turns without a usable dia_id or repeating one.
	TurnsDropped int
	// ObservationLinksDropped counts observation dia_ids that name no turn.
	ObservationLinksDropped int

	Questions         int // QA items in the files
	WithEvidence      int // loaded: at least one evidence turn after repair
	SkippedNoEvidence int // QA items left without evidence, not loaded

	EvidenceIDs       int // evidence ids seen, after splitting
	EvidenceSplit     int // evidence strings holding several ids ("D8:6; D9:17")
	EvidenceRepaired  int // ids rewritten to an existing turn
	DroppedMalformed  int // ids that are not dia_ids, or repair found no turn
	DroppedDangling   int // well-formed ids naming no turn
	DuplicateEvidence int // ids repeated within a question

	// Categories counts questions per category.
	Categories map[Category]CategoryStats
}

// CategoryStats counts one category's questions.
type CategoryStats struct {
	Questions    int // in the files
	WithEvidence int // loaded
}

func (s *Stats) add(o Stats) {
	s.Conversations += o.Conversations
	s.Sessions += o.Sessions
	s.Turns += o.Turns
	s.ImageTurns += o.ImageTurns
	s.Observations += o.Observations
	s.SessionsWithoutTurns += o.SessionsWithoutTurns
	s.UnparsedTimes += o.UnparsedTimes
	s.TurnsDropped += o.TurnsDropped
	s.ObservationLinksDropped += o.ObservationLinksDropped
	s.Questions += o.Questions
	s.WithEvidence += o.WithEvidence
	s.SkippedNoEvidence += o.SkippedNoEvidence
	s.EvidenceIDs += o.EvidenceIDs
	s.EvidenceSplit += o.EvidenceSplit
	s.EvidenceRepaired += o.EvidenceRepaired
	s.DroppedMalformed += o.DroppedMalformed
	s.DroppedDangling += o.DroppedDangling
	s.DuplicateEvidence += o.DuplicateEvidence
	for c, cs := range o.Categories {
		s.category(c, cs.Questions, cs.WithEvidence)
	}
}

func (s *Stats) category(c Category, questions, withEvidence int) {
	if s.Categories == nil {
		s.Categories = make(map[Category]CategoryStats)
	}
	cs := s.Categories[c]
	cs.Questions += questions
	cs.WithEvidence += withEvidence
	s.Categories[c] = cs
}
