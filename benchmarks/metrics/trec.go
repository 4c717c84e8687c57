package metrics

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Qrels maps a query id to its judged documents and their graded
// relevance. A grade > 0 means relevant; 0 and negative grades are judged
// non-relevant.
type Qrels map[string]map[string]int

// Run maps a query id to the documents a system retrieved for it, in the
// order they were read. Evaluate re-ranks them with Rank; the Rank field
// read from a file is kept for reference only.
type Run map[string][]Ranked

// Ranked is one retrieved document.
type Ranked struct {
	DocID string
	Score float64
	Rank  int
}

// ParseError reports a malformed line in a qrels or run file. Line is
// 1-based and counts every physical line, blank and comment lines included.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// isSpace is C's isspace in the "C" locale, which is what trec_eval splits
// fields on. Non-ASCII spaces are part of an id, as they are for trec_eval.
func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

func fields(line string) []string { return strings.FieldsFunc(line, isSpace) }

// forEachLine calls fn with the fields of every line that is neither blank
// nor a comment (first non-space character '#', as in trec_eval 9.x).
func forEachLine(r io.Reader, fn func(lineNo int, f []string) error) error {
	br := bufio.NewReader(r)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadString('\n')
		last := errors.Is(err, io.EOF)
		if err != nil && !last {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		if f := fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			if ferr := fn(lineNo, f); ferr != nil {
				return ferr
			}
		}
		if last {
			return nil
		}
	}
}

// ReadQrels parses TREC qrels: "qid iter docid rel" per line, whitespace
// separated. The iteration column may hold anything and is ignored. rel must
// be an integer. Blank lines and lines starting with '#' are skipped.
//
// A repeated (qid, docid) pair is not an error: the last line wins.
// (trec_eval refuses such files with "duplicate docs"; every file it accepts
// is read identically here.)
func ReadQrels(r io.Reader) (Qrels, error) {
	q := Qrels{}
	err := forEachLine(r, func(n int, f []string) error {
		if len(f) != 4 {
			return &ParseError{n, fmt.Sprintf("want 4 fields \"qid iter docid rel\", got %d", len(f))}
		}
		rel, err := strconv.Atoi(f[3])
		if err != nil {
			return &ParseError{n, fmt.Sprintf("relevance %q is not an integer", f[3])}
		}
		docs := q[f[0]]
		if docs == nil {
			docs = map[string]int{}
			q[f[0]] = docs
		}
		docs[f[2]] = rel
		return nil
	})
	if err != nil {
		return nil, err
	}
	return q, nil
}

// WriteQrels writes q as "qid 0 docid rel" lines sorted by qid, then docid.
func WriteQrels(w io.Writer, q Qrels) error {
	bw := bufio.NewWriter(w)
	for _, qid := range sortedKeys(q) {
		if err := checkID("query id", qid, true); err != nil {
			return err
		}
		docs := q[qid]
		for _, doc := range sortedKeys(docs) {
			if err := checkID("doc id", doc, false); err != nil {
				return err
			}
			fmt.Fprintf(bw, "%s 0 %s %d\n", qid, doc, docs[doc])
		}
	}
	return bw.Flush()
}

// ReadRun parses a TREC run: "qid Q0 docid rank score tag" per line. Like
// trec_eval it ignores the Q0 column and anything after the tag; unlike
// trec_eval it requires rank to be an integer and score to be a finite
// float. A docid repeated within one query is an error (trec_eval stops
// with "duplicate docs" when it evaluates that query).
func ReadRun(r io.Reader) (Run, error) {
	run := Run{}
	seen := map[string]map[string]int{} // qid -> docid -> line
	err := forEachLine(r, func(n int, f []string) error {
		if len(f) < 6 {
			return &ParseError{n, fmt.Sprintf("want 6 fields \"qid Q0 docid rank score tag\", got %d", len(f))}
		}
		qid, doc := f[0], f[2]
		rank, err := strconv.Atoi(f[3])
		if err != nil {
			return &ParseError{n, fmt.Sprintf("rank %q is not an integer", f[3])}
		}
		score, err := strconv.ParseFloat(f[4], 64)
		if err != nil || math.IsInf(score, 0) || math.IsNaN(score) {
			return &ParseError{n, fmt.Sprintf("score %q is not a finite number", f[4])}
		}
		lines := seen[qid]
		if lines == nil {
			lines = map[string]int{}
			seen[qid] = lines
		}
		if first, dup := lines[doc]; dup {
			return &ParseError{n, fmt.Sprintf("duplicate doc %q for query %q (first on line %d)", doc, qid, first)}
		}
		lines[doc] = n
		run[qid] = append(run[qid], Ranked{DocID: doc, Score: score, Rank: rank})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return run, nil
}

// WriteRun writes run in TREC format, queries sorted by id, each query's
// documents in trec_eval ranking order (see Rank) with ranks 1..n. Scores
// are written in the shortest form that reads back exactly. tag must be a
// non-empty token without whitespace.
func WriteRun(w io.Writer, run Run, tag string) error {
	if err := checkID("run tag", tag, false); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for _, qid := range sortedKeys(run) {
		if err := checkID("query id", qid, true); err != nil {
			return err
		}
		ranked, err := Rank(qid, run[qid])
		if err != nil {
			return err
		}
		for _, d := range ranked {
			if err := checkID("doc id", d.DocID, false); err != nil {
				return err
			}
			if math.IsInf(d.Score, 0) || math.IsNaN(d.Score) {
				return fmt.Errorf("query %q doc %q: score %v is not finite", qid, d.DocID, d.Score)
			}
			fmt.Fprintf(bw, "%s Q0 %s %d %s %s\n", qid, d.DocID, d.Rank,
				strconv.FormatFloat(d.Score, 'g', -1, 64), tag)
		}
	}
	return bw.Flush()
}

// checkID rejects ids that could not be read back: empty, containing
// whitespace, or (for the first column) starting a comment.
func checkID(what, id string, first bool) error {
	switch {
	case id == "":
		return fmt.Errorf("empty %s", what)
	case strings.ContainsFunc(id, isSpace):
		return fmt.Errorf("%s %q contains whitespace", what, id)
	case first && strings.HasPrefix(id, "#"):
		return fmt.Errorf("%s %q starts with '#', which reads as a comment", what, id)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
