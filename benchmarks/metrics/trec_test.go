package metrics

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Table inputs below also seed the fuzz targets.

var qrelsParseCases = []struct {
	name, in string
	want     Qrels
	errLine  int // 0: no error expected
}{
	{"basic", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n",
		Qrels{"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}, 0},
	{"any iteration column, tabs, CRLF, blank and comment lines, no final newline",
		"# header\r\n\nq1\tQ0  d1 3\r\n   \nq1 iter7 d2 -1", Qrels{"q1": {"d1": 3, "d2": -1}}, 0},
	{"duplicate pair: last wins", "q1 0 d1 1\nq1 0 d1 0\n", Qrels{"q1": {"d1": 0}}, 0},
	{"empty input", "", Qrels{}, 0},
	{"too few fields", "q1 0 d1 1\n\nq1 0 d2\n", nil, 3},
	{"too many fields", "q1 0 d1 1 extra\n", nil, 1},
	{"relevance not an integer", "q1 0 d1 1\nq1 0 d2 1.5\n", nil, 2},
}

var runParseCases = []struct {
	name, in string
	want     Run
	errLine  int
}{
	{"basic, file order kept", "q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 0.9 tag\nq2 Q0 d1 1 -3e2 tag\n",
		Run{"q1": {{"d1", 0.5, 1}, {"d2", 0.9, 2}}, "q2": {{"d1", -300, 1}}}, 0},
	{"extra columns ignored, comments and blanks skipped", "# c\n\nq1 Q0 d1 7 1 tag more\n",
		Run{"q1": {{"d1", 1, 7}}}, 0},
	{"empty input", "", Run{}, 0},
	{"too few fields", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4\n", nil, 2},
	{"rank not an integer", "q1 Q0 d1 first 0.5 t\n", nil, 1},
	{"score not a number", "\n\nq1 Q0 d1 1 high t\n", nil, 3},
	{"score NaN", "q1 Q0 d1 1 NaN t\n", nil, 1},
	{"score infinite", "q1 Q0 d1 1 -Inf t\n", nil, 1},
	{"score out of range", "q1 Q0 d1 1 1e999 t\n", nil, 1},
	{"duplicate doc in a query", "q1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n", nil, 3},
}

func checkParseErr(t *testing.T, err error, line int) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *ParseError on line %d", err, line)
	}
	if pe.Line != line {
		t.Fatalf("error on line %d (%v), want line %d", pe.Line, err, line)
	}
}

func TestReadQrels(t *testing.T) {
	for _, tt := range qrelsParseCases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadQrels(strings.NewReader(tt.in))
			if tt.errLine != 0 {
				checkParseErr(t, err, tt.errLine)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadRun(t *testing.T) {
	for _, tt := range runParseCases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadRun(strings.NewReader(tt.in))
			if tt.errLine != 0 {
				checkParseErr(t, err, tt.errLine)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := ReadRun(strings.NewReader("q1 Q0 d1 1 x t\n"))
	if got, want := err.Error(), `line 1: score "x" is not a finite number`; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func TestQrelsRoundTrip(t *testing.T) {
	q := Qrels{"q2": {"b": 0, "a": 3}, "q1": {"c": -1}, "q10": {"d\u00a0x": 1}}
	var buf bytes.Buffer
	if err := WriteQrels(&buf, q); err != nil {
		t.Fatal(err)
	}
	if want := "q1 0 c -1\nq10 0 d\u00a0x 1\nq2 0 a 3\nq2 0 b 0\n"; buf.String() != want {
		t.Fatalf("wrote %q, want %q", buf.String(), want)
	}
	back, err := ReadQrels(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, q) {
		t.Fatalf("round trip: got %v, want %v", back, q)
	}
}

func TestRunRoundTrip(t *testing.T) {
	run := Run{
		"q1": {{"a", 0.1, 9}, {"b", 0.30000000000000004, 1}, {"c", 0.1, 3}},
		"q2": {{"x", -1e-300, 1}},
	}
	var buf bytes.Buffer
	if err := WriteRun(&buf, run, "myrun"); err != nil {
		t.Fatal(err)
	}
	// Ranking order with ranks 1..n; the a/c tie goes to c (docid descending).
	want := "q1 Q0 b 1 0.30000000000000004 myrun\nq1 Q0 c 2 0.1 myrun\nq1 Q0 a 3 0.1 myrun\n" +
		"q2 Q0 x 1 -1e-300 myrun\n"
	if buf.String() != want {
		t.Fatalf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
	back, err := ReadRun(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for qid, docs := range run {
		ranked, _ := Rank(qid, docs)
		if !reflect.DeepEqual(back[qid], ranked) {
			t.Fatalf("round trip %s: got %v, want %v", qid, back[qid], ranked)
		}
	}
}

func TestWriteRejectsUnreadable(t *testing.T) {
	cases := []struct {
		name string
		err  error
	}{
		{"qrels doc with space", WriteQrels(&bytes.Buffer{}, Qrels{"q": {"a b": 1}})},
		{"qrels comment qid", WriteQrels(&bytes.Buffer{}, Qrels{"#q": {"a": 1}})},
		{"run empty tag", WriteRun(&bytes.Buffer{}, Run{"q": {{"a", 1, 1}}}, "")},
		{"run empty doc", WriteRun(&bytes.Buffer{}, Run{"q": {{"", 1, 1}}}, "t")},
		{"run NaN score", WriteRun(&bytes.Buffer{}, Run{"q": {{"a", nan(), 1}}}, "t")},
		{"run duplicate doc", WriteRun(&bytes.Buffer{}, Run{"q": {{"a", 1, 1}, {"a", 2, 2}}}, "t")},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
