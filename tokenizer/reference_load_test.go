package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sugarme/tokenizer/model/bpe"
)

// referenceParse is the loader rerankd used before parse.go: encoding/json
// into a map and []json.RawMessage, merges resolved by sugarme's
// bpe.CreateMerges. It stays as the oracle the streaming parser is checked
// against (TestParseMatchesReference, FuzzParse) and as the baseline of
// BenchmarkLoad_Qwen3.
func referenceParse(data []byte) (*parsedFile, error) {
	var f struct {
		fileJSON
		Model struct {
			modelJSON
			Vocab  map[string]int    `json:"vocab"`
			Merges []json.RawMessage `json:"merges"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	p := &parsedFile{fileJSON: f.fileJSON, vocab: f.Model.Vocab}
	p.Model = f.Model.modelJSON
	if p.vocab == nil {
		p.vocab = map[string]int{}
	}
	p.merges, p.mergesErr = referenceMerges(p.vocab, f.Model.Merges)
	return p, nil
}

func referenceMerges(vocab map[string]int, raw []json.RawMessage) (map[uint64]merge, error) {
	lines := make([]string, 0, len(raw))
	for i, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err == nil {
			lines = append(lines, s)
			continue
		}
		var pair []string
		if err := json.Unmarshal(r, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("merge %d: want \"a b\" or [\"a\",\"b\"], got %s", i, r)
		}
		if strings.Contains(pair[0], " ") || strings.Contains(pair[1], " ") {
			return nil, fmt.Errorf("merge %d: token with a space is not supported: %s", i, r)
		}
		lines = append(lines, pair[0]+" "+pair[1])
	}
	table, err := bpe.CreateMerges(vocab, lines)
	if err != nil {
		return nil, fmt.Errorf("merges: %w", err)
	}
	out := make(map[uint64]merge, len(*table))
	for p, v := range *table {
		out[pairKey(int32(p.C1), int32(p.C2))] = merge{rank: int32(v.Rank), id: int32(v.NewId)}
	}
	return out, nil
}

// referenceFromBytes is FromBytes over referenceParse.
func referenceFromBytes(data, cfg []byte) (*Tokenizer, error) {
	f, err := referenceParse(data)
	if err != nil {
		return nil, err
	}
	return fromParsed(f, cfg)
}

func jsonIndent(dst *bytes.Buffer, src []byte) error { return json.Indent(dst, src, "", "  ") }
