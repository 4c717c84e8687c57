package tokenizer

import (
	"fmt"
	"strings"
)

// decode is the WordPiece decoder or the Metaspace decoder: replacements become spaces and the
// first token loses one leading space unless nothing was prepended.
func (p *pipeline) decode(t *Tokenizer, ids []int, skipSpecial bool) (string, error) {
	var b strings.Builder
	first := true
	var wp []string
	for _, id := range ids {
		if id < 0 || id >= len(t.tokens) {
			return "", fmt.Errorf("decode: id %d out of range [0, %d)", id, len(t.tokens))
		}
		if skipSpecial && t.IsSpecial(id) {
			continue
		}
		tok := t.tokens[id]
		if p.wpDecoder != nil {
			wp = append(wp, tok)
			continue
		}
		if p.meta != nil {
			tok = strings.ReplaceAll(tok, p.meta.repl, " ")
			if first && p.meta.prepend != "never" {
				tok = strings.TrimPrefix(tok, " ")
			}
		}
		first = false
		b.WriteString(tok)
	}
	if p.wpDecoder != nil {
		return decodeWordPiece(wp, p.wpDecoder.prefix, p.wpDecoder.cleanup), nil
	}
	return b.String(), nil
}

type wpDecoder struct {
	prefix  string
	cleanup bool
}
