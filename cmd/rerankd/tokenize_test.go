package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/version"
)

func TestTokenizeCLI(t *testing.T) {
	tok := defaultTokenizer()
	xlmr := "../../tokenizer/testdata/unigram/xlmr-current.json"
	bert := "../../tokenizer/testdata/wordpiece/bert-uncased.json"
	cases := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantOut  string // exact stdout
		wantErr  string // substring of stderr
	}{
		{"basic", nil, `{"text":"Hello <|im_start|>world"}` + "\n", 0, `{"ids":[9707,220,151644,14615]}` + "\n", ""},
		{"empty text and blank lines", nil, "\n" + `{"text":""}` + "\r\n\n   \n", 0, `{"ids":[]}` + "\n", ""},
		{"no trailing newline", nil, `{"text":"hi"}`, 0, `{"ids":[6023]}` + "\n", ""},
		{"extra fields ignored", nil, `{"id":7,"text":"hi"}` + "\n", 0, `{"ids":[6023]}` + "\n", ""},
		{"offsets", []string{"--offsets"}, `{"text":"hi 你好"}` + "\n", 0, `{"ids":[6023,220,108386],"offsets":[[0,2],[2,3],[3,9]]}` + "\n", ""},
		{"missing text", nil, `{"text":"a"}` + "\n" + `{"txt":"b"}` + "\n" + `{"text":"c"}` + "\n", 1, `{"ids":[64]}` + "\n", `line 2: missing "text"`},
		{"null text", nil, `{"text":null}`, 1, "", "line 1: missing"},
		{"wrong type", nil, `{"text":5}`, 1, "", "line 1: want a JSON object"},
		{"not json", nil, "hello\n", 1, "", "line 1: want a JSON object"},
		{"truncated json", nil, `{"text":"abc`, 1, "", "line 1"},
		{"array", nil, `["text"]`, 1, "", "line 1"},
		{"bad flag", []string{"--nope"}, "", 2, "", "flag provided but not defined"},
		{"positional arg", []string{"file.jsonl"}, "", 2, "", "unexpected argument"},
		// Pairs: ids checked against the Rust reference (setTruncation(8)).
		{"pair unigram truncated", []string{"--tokenizer", xlmr, "--max-len", "8"}, `{"text":"Café Naïve","pair":"hello\nनमस्ते"}`, 0,
			`{"ids":[0,4,78,2,2,4,20,2],"type_ids":[0,0,0,0,0,0,0,0],"truncated":true}` + "\n", ""},
		{"pair wordpiece", []string{"--tokenizer", bert}, `{"text":"Café Naïve","pair":"hello world"}`, 0,
			`{"ids":[2,563,540,3,689,117,102,108,96,80,3],"type_ids":[0,0,0,0,1,1,1,1,1,1,1]}` + "\n", ""},
		{"special single", []string{"--tokenizer", bert, "--special"}, `{"text":"x"}`, 0, `{"ids":[2,119,3],"type_ids":[0,0,0]}` + "\n", ""},
		{"pair offsets", []string{"--offsets"}, `{"text":"a","pair":"b"}`, 1, "", "--offsets is not available"},
		{"pair too short", []string{"--tokenizer", xlmr, "--max-len", "3"}, `{"text":"a","pair":"b"}`, 1, "", "below the 4 special tokens"},
		{"missing tokenizer", []string{"--tokenizer", "/nonexistent"}, "{}", 1, "", "run scripts/setup.sh"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"tokenize", "--tokenizer", tok}, c.args...)
			code := run(args, strings.NewReader(c.stdin), &out, &errb)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.wantCode, errb.String())
			}
			if out.String() != c.wantOut {
				t.Errorf("stdout %q, want %q", out.String(), c.wantOut)
			}
			if !strings.Contains(errb.String(), c.wantErr) {
				t.Errorf("stderr %q, want it to contain %q", errb.String(), c.wantErr)
			}
		})
	}
}

func TestTokenizeCLILongLine(t *testing.T) {
	old := maxLine
	maxLine = 1000
	defer func() { maxLine = old }()
	var out, errb bytes.Buffer
	in := `{"text":"` + strings.Repeat("a", 5000) + `"}`
	if code := run([]string{"tokenize", "--tokenizer", defaultTokenizer()}, strings.NewReader(in), &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(errb.String(), "longer than 1000 bytes") {
		t.Errorf("stderr %q", errb.String())
	}
}

// TestTokenizeCLIGolden pipes the golden corpus through the CLI and checks
// every line against the reference ids: the contract end to end.
func TestTokenizeCLIGolden(t *testing.T) {
	data, err := os.ReadFile("../../tokenizer/testdata/golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"tokenize", "--tokenizer", defaultTokenizer()}, bytes.NewReader(data), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := bufio.NewScanner(bytes.NewReader(data))
	want.Buffer(nil, 16<<20)
	got := bufio.NewScanner(&out)
	got.Buffer(nil, 16<<20)
	n := 0
	for want.Scan() {
		if !got.Scan() {
			t.Fatalf("output ends after %d lines", n)
		}
		var w struct{ IDs []int }
		var g struct{ IDs []int }
		if err := json.Unmarshal(want.Bytes(), &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		n++
		if !slices.Equal(w.IDs, g.IDs) {
			t.Fatalf("line %d: ids %v, want %v", n, g.IDs, w.IDs)
		}
	}
	if got.Scan() {
		t.Fatal("more output lines than inputs")
	}
	if n < 3000 {
		t.Fatalf("only %d lines checked", n)
	}
}

func TestRunDispatch(t *testing.T) {
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{nil, 2, ""},
		{[]string{"help"}, 0, ""},
		{[]string{"frobnicate"}, 2, ""},
		{[]string{"version"}, 0, "rerankd " + version.String() + "\n"},
		{[]string{"tokenize", "-h"}, 0, ""},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := run(c.args, strings.NewReader(""), &out, &errb); code != c.code || out.String() != c.out {
			t.Errorf("run(%q) = %d, stdout %q; want %d, %q", c.args, code, out.String(), c.code, c.out)
		}
	}
}
