package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rerankd/rerankd/tokenizer"
)

// maxLine bounds one input line so a stream without newlines cannot exhaust
// memory. A variable so tests can lower it.
var maxLine = 64 << 20

type tokenizeIn struct {
	Text *string `json:"text"`
	Pair *string `json:"pair"`
}

type tokenizeOut struct {
	IDs       []int    `json:"ids"`
	TypeIDs   []int    `json:"type_ids,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
	Offsets   [][2]int `json:"offsets,omitempty"` // [start, end) byte ranges, as HF writes them
}

// runTokenize implements the CLI contract other tooling depends on: JSON
// lines {"text": "..."} on stdin, one {"ids": [...]} line per input on
// stdout, in order, without added special tokens (special tokens written in
// the text are still recognised). A line {"text": a, "pair": b} is the
// model input for a pair: the tokenizer's post-processor's special tokens,
// "type_ids" beside "ids", truncated LongestFirst to --max-len when set;
// --special does the same for single texts. Blank lines are skipped. The first bad line
// stops the run with its line number on stderr and exit status 1; the output
// written before it stays valid.
func runTokenize(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tokenize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("tokenizer", defaultTokenizer(), "tokenizer.json or a folder holding it (env RERANKD_TOKENIZER)")
	offsets := fs.Bool("offsets", false, "also write the byte offsets [start, end) of each token")
	special := fs.Bool("special", false, "add the post-processor's special tokens to single texts too, and write type_ids")
	maxLen := fs.Int("max-len", 0, "truncate special-token encodings (pairs, --special) to this many ids, LongestFirst (0: no limit)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (input is read from stdin)", errUsage, fs.Arg(0))
	}
	if *maxLen < 0 {
		return fmt.Errorf("%w: --max-len %d: want >= 0 (0: no limit)", errUsage, *maxLen)
	}
	tk, err := tokenizer.Shared(*path)
	if err != nil {
		return fmt.Errorf("%w (run scripts/setup.sh, or pass --tokenizer)", err)
	}
	in := bufio.NewReaderSize(stdin, 1<<20)
	out := bufio.NewWriterSize(stdout, 1<<20)
	defer out.Flush() //nolint:errcheck // the normal path flushes and checks; this one only runs after another error
	enc := json.NewEncoder(out)
	for lineNo := 1; ; lineNo++ {
		line, err := readLine(in)
		if errors.Is(err, io.EOF) {
			return out.Flush()
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var req tokenizeIn
		if err := json.Unmarshal(line, &req); err != nil {
			if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
				return fmt.Errorf("line %d: want a JSON object {\"text\": \"...\"}: %q must be a JSON string, got JSON %s", lineNo, te.Field, te.Value)
			}
			return fmt.Errorf("line %d: want a JSON object {\"text\": \"...\"}: %w", lineNo, err)
		}
		if req.Text == nil {
			return fmt.Errorf("line %d: missing \"text\"", lineNo)
		}
		var res tokenizeOut
		if req.Pair != nil || *special {
			if *offsets {
				return fmt.Errorf("line %d: --offsets is not available for pairs or with --special", lineNo)
			}
			var e tokenizer.Encoded
			if req.Pair != nil {
				e, err = tk.EncodePair(*req.Text, *req.Pair, *maxLen)
			} else {
				e, err = tk.EncodeSingle(*req.Text, *maxLen)
			}
			if err != nil {
				return fmt.Errorf("line %d: %w", lineNo, err)
			}
			res.IDs, res.TypeIDs, res.Truncated = e.IDs, e.TypeIDs, e.Truncated
		} else if *offsets {
			e := tk.Encode(*req.Text)
			res.IDs = e.IDs
			res.Offsets = make([][2]int, len(e.Offsets))
			for i, o := range e.Offsets {
				res.Offsets[i] = [2]int{o.Start, o.End}
			}
		} else {
			res.IDs = tk.EncodeIDs(*req.Text)
		}
		if res.IDs == nil {
			res.IDs = []int{} // "ids": [] for empty text, never null
		}
		if err := enc.Encode(res); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
}

// readLine returns the next line without its newline, io.EOF at the end, or
// an error for a line longer than maxLine.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return buf, nil
		default:
			return nil, err
		}
	}
}
