package zh

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rerankd/rerankd/benchmarks/metrics"
)

// Memory is one remembered item of the user's agent.
type Memory struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// Kind is what the memory records: fact, preference, plan, event or
	// dialog (a turn kept verbatim).
	Kind string `json:"kind"`
	// Speaker is "user" or "assistant" (the agent's own turns).
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
}

// Query is one question with its relevance judgments.
type Query struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Tags say what makes the query hard; see the Tag constants.
	Tags []string `json:"tags"`
	// Relevant maps memory IDs to grades: 2 answers the query, 1 is
	// related context (an earlier plan, a follow-up). Unlisted memories
	// are not relevant.
	Relevant map[string]int `json:"relevant"`
}

// The query tags. A query has one or more.
const (
	TagOverlap     = "overlap"     // shares a word or two with the answer, not the phrasing
	TagParaphrase  = "paraphrase"  // the answer uses other words (水果 for 芒果)
	TagName        = "name"        // hinges on a person's, pet's or product's name
	TagNumber      = "number"      // asks for or contains a number, a code, an amount
	TagMixed       = "mixed"       // Chinese mixed with Latin words ("我的 MacBook")
	TagTraditional = "traditional" // query or answer in traditional characters
	TagFullwidth   = "fullwidth"   // query or answer in full-width forms (ＣＡ１８３１)
	TagShortWord   = "short-word"  // the key word is one character (猫, 茶, 书)
)

// Tags returns every tag, in a fixed order used for reports.
func Tags() []string {
	return []string{TagOverlap, TagParaphrase, TagName, TagNumber, TagMixed,
		TagTraditional, TagFullwidth, TagShortWord}
}

var (
	kinds    = []string{"fact", "preference", "plan", "event", "dialog"}
	speakers = []string{"user", "assistant"}
)

// Dataset is the test set: memories in file order, queries in file order.
type Dataset struct {
	Memories []Memory
	Queries  []Query
}

//go:embed testdata/memories.json testdata/queries.json
var files embed.FS

// Load returns the committed test set (embedded in the binary, so the
// command and the tests need no path).
func Load() (*Dataset, error) {
	mem, err := files.ReadFile("testdata/memories.json")
	if err != nil {
		return nil, err
	}
	qs, err := files.ReadFile("testdata/queries.json")
	if err != nil {
		return nil, err
	}
	return Parse(bytes.NewReader(mem), bytes.NewReader(qs))
}

// Parse reads a memories file and a queries file (JSON arrays of Memory
// and Query) and checks them: unique non-empty IDs and texts, known kinds,
// speakers and tags, a time on every memory, judgments that name existing
// memories with grade 1 or 2, and at least one grade-2 memory per query.
// Unknown fields are errors, so a typo in a hand-edited file cannot drop a
// judgment silently. All problems are reported, joined.
func Parse(memories, queries io.Reader) (*Dataset, error) {
	var d Dataset
	if err := decodeStrict(memories, &d.Memories); err != nil {
		return nil, fmt.Errorf("zh: memories: %w", err)
	}
	if err := decodeStrict(queries, &d.Queries); err != nil {
		return nil, fmt.Errorf("zh: queries: %w", err)
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	return &d, nil
}

func decodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON array")
	}
	return nil
}

func (d *Dataset) check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("zh: "+format, a...)) }
	mems := make(map[string]bool, len(d.Memories))
	for i, m := range d.Memories {
		switch {
		case m.ID == "":
			bad("memory %d: no id", i)
		case mems[m.ID]:
			bad("memory %s: duplicate id", m.ID)
		}
		mems[m.ID] = true
		if strings.TrimSpace(m.Text) == "" {
			bad("memory %s: empty text", m.ID)
		}
		if m.Time.IsZero() {
			bad("memory %s: no time", m.ID)
		}
		if !slices.Contains(kinds, m.Kind) {
			bad("memory %s: kind %q not one of %v", m.ID, m.Kind, kinds)
		}
		if !slices.Contains(speakers, m.Speaker) {
			bad("memory %s: speaker %q not one of %v", m.ID, m.Speaker, speakers)
		}
	}
	seen := make(map[string]bool, len(d.Queries))
	for i, q := range d.Queries {
		switch {
		case q.ID == "":
			bad("query %d: no id", i)
		case seen[q.ID]:
			bad("query %s: duplicate id", q.ID)
		}
		seen[q.ID] = true
		if strings.TrimSpace(q.Text) == "" {
			bad("query %s: empty text", q.ID)
		}
		if len(q.Tags) == 0 {
			bad("query %s: no tags", q.ID)
		}
		for _, t := range q.Tags {
			if !slices.Contains(Tags(), t) {
				bad("query %s: unknown tag %q", q.ID, t)
			}
		}
		answered := false
		for id, g := range q.Relevant {
			if !mems[id] {
				bad("query %s: judged memory %s does not exist", q.ID, id)
			}
			if g != 1 && g != 2 {
				bad("query %s: memory %s has grade %d, want 1 or 2", q.ID, id, g)
			}
			answered = answered || g == 2
		}
		if !answered {
			bad("query %s: no memory with grade 2", q.ID)
		}
	}
	return errors.Join(errs...)
}

// Qrels returns the judgments in the form benchmarks/metrics scores.
func (d *Dataset) Qrels() metrics.Qrels {
	q := make(metrics.Qrels, len(d.Queries))
	for _, query := range d.Queries {
		q[query.ID] = maps.Clone(query.Relevant)
	}
	return q
}

// QrelsTagged returns the judgments of the queries carrying tag.
func (d *Dataset) QrelsTagged(tag string) metrics.Qrels {
	q := metrics.Qrels{}
	for _, query := range d.Queries {
		if slices.Contains(query.Tags, tag) {
			q[query.ID] = maps.Clone(query.Relevant)
		}
	}
	return q
}
