package tokenizer

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// decode maps ids to their tokens and runs the file's decoders over them,
// each turning the list of token strings into another (the reference's
// decode_chain), then joins the result.
func (p *pipeline) decode(t *Tokenizer, ids []int, skipSpecial bool) (string, error) {
	tokens := make([]string, 0, len(ids))
	for _, id := range ids {
		if id < 0 || id >= len(t.tokens) {
			return "", fmt.Errorf("decode: id %d out of range [0, %d)", id, len(t.tokens))
		}
		if skipSpecial && t.IsSpecial(id) {
			continue
		}
		tokens = append(tokens, t.tokens[id])
	}
	if p.decoders == nil {
		return strings.Join(tokens, " "), nil
	}
	for _, d := range p.decoders {
		tokens = d.decodeChain(tokens)
	}
	return strings.Join(tokens, ""), nil
}

type decodeStep interface {
	decodeChain(tokens []string) []string
}

// metaspaceDecoder turns each replacement into a space; in the first token
// every replacement is dropped instead unless nothing was prepended
// (prepend_scheme never).
type metaspaceDecoder struct {
	repl     string
	dropLead bool
}

func (m metaspaceDecoder) decodeChain(tokens []string) []string {
	for i, tok := range tokens {
		with := " "
		if i == 0 && m.dropLead {
			with = ""
		}
		tokens[i] = strings.ReplaceAll(tok, m.repl, with)
	}
	return tokens
}

// wordPieceDecoder: a continuation loses its prefix, any other token after
// the first gets a space; cleanup undoes BERT's spacing around punctuation
// and contractions, token by token, as the reference.
type wordPieceDecoder struct {
	prefix  string
	cleanup bool
}

func (w wordPieceDecoder) decodeChain(tokens []string) []string {
	for i, tok := range tokens {
		if i != 0 {
			if strings.HasPrefix(tok, w.prefix) {
				tok = strings.Replace(tok, w.prefix, "", 1)
			} else {
				tok = " " + tok
			}
		}
		if w.cleanup {
			for k := 0; k < len(wordPieceCleanup); k += 2 {
				tok = strings.ReplaceAll(tok, wordPieceCleanup[k], wordPieceCleanup[k+1])
			}
		}
		tokens[i] = tok
	}
	return tokens
}

// wordPieceCleanup: pairs replaced one after another, in this order, as
// the reference's cleanup.
var wordPieceCleanup = []string{" .", ".", " ?", "?", " !", "!", " ,", ",", " ' ", "'",
	" n't", "n't", " 'm", "'m", " do not", " don't", " 's", "'s", " 've", "'ve", " 're", "'re"}

// byteFallbackDecoder turns each run of <0xXX> tokens into the text its
// bytes spell, or one U+FFFD per byte when they are not valid UTF-8.
type byteFallbackDecoder struct{}

func (byteFallbackDecoder) decodeChain(tokens []string) []string {
	out := tokens[:0:0]
	var run []byte
	flush := func() {
		if len(run) == 0 {
			return
		}
		if utf8.Valid(run) {
			out = append(out, string(run))
		} else {
			for range run {
				out = append(out, "\uFFFD")
			}
		}
		run = run[:0]
	}
	for _, tok := range tokens {
		if b, ok := byteToken(tok); ok {
			run = append(run, b)
			continue
		}
		flush()
		out = append(out, tok)
	}
	flush()
	return out
}

// byteToken reads "<0xXX>" as Rust's u8::from_str_radix(XX, 16) does
// (either case, and a leading '+' with one digit).
func byteToken(tok string) (byte, bool) {
	if len(tok) != 6 || !strings.HasPrefix(tok, "<0x") || tok[5] != '>' {
		return 0, false
	}
	d := tok[3:5]
	if d[0] == '+' {
		d = d[1:]
	}
	v := 0
	for i := 0; i < len(d); i++ {
		c := d[i]
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A') + 10
		default:
			return 0, false
		}
	}
	return byte(v), true
}

// fuseDecoder joins every token into one.
type fuseDecoder struct{}

func (fuseDecoder) decodeChain(tokens []string) []string {
	return []string{strings.Join(tokens, "")}
}

// replaceDecoder replaces every match in each token.
type replaceDecoder struct {
	re   *regexp.Regexp
	with string
}

func (r replaceDecoder) decodeChain(tokens []string) []string {
	for i, tok := range tokens {
		tokens[i] = r.re.ReplaceAllLiteralString(tok, r.with)
	}
	return tokens
}

// stripDecoder removes up to start leading content characters of each
// token.
type stripDecoder struct {
	content rune
	start   int
}

func (s stripDecoder) decodeChain(tokens []string) []string {
	for i, tok := range tokens {
		for n := 0; n < s.start; n++ {
			r, w := utf8.DecodeRuneInString(tok)
			if w == 0 || r != s.content {
				break
			}
			tok = tok[w:]
		}
		tokens[i] = tok
	}
	return tokens
}
