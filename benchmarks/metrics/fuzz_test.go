package metrics

import (
	"bytes"
	"math"
	"reflect"
	"testing"
)

func nan() float64 { return math.NaN() }

// FuzzReadQrels: parsing never panics, and whatever parses writes out and
// reads back to the same Qrels.
func FuzzReadQrels(f *testing.F) {
	for _, c := range qrelsParseCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		q, err := ReadQrels(bytes.NewBufferString(in))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteQrels(&buf, q); err != nil {
			t.Fatalf("parsed qrels do not write: %v", err)
		}
		back, err := ReadQrels(&buf)
		if err != nil {
			t.Fatalf("written qrels do not read back: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(back, q) {
			t.Fatalf("round trip: got %v, want %v", back, q)
		}
	})
}

// FuzzReadRun: parsing never panics, and a parsed run writes out and reads
// back as the same documents in ranking order with ranks 1..n.
func FuzzReadRun(f *testing.F) {
	for _, c := range runParseCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		run, err := ReadRun(bytes.NewBufferString(in))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteRun(&buf, run, "fuzz"); err != nil {
			t.Fatalf("parsed run does not write: %v", err)
		}
		back, err := ReadRun(&buf)
		if err != nil {
			t.Fatalf("written run does not read back: %v\n%s", err, buf.String())
		}
		if len(back) != len(run) {
			t.Fatalf("round trip: %d queries, want %d", len(back), len(run))
		}
		for qid, docs := range run {
			want, err := Rank(qid, docs)
			if err != nil {
				t.Fatalf("parsed run does not rank: %v", err)
			}
			if !reflect.DeepEqual(back[qid], want) {
				t.Fatalf("round trip %q: got %v, want %v", qid, back[qid], want)
			}
		}
	})
}
