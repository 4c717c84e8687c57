package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

// precompiled is SentencePiece's normalization table (the
// precompiled_charsmap of a model's normalizer_spec): a double-array trie
// over UTF-8 keys whose values index NUL-terminated replacements. sugarme's
// port turns combining marks into literal "U+XXXX" text once anything else
// in the string changes, so the lookup and the grapheme rule are ours.
type precompiled struct {
	array      []uint32
	normalized string
}

func newPrecompiled(b64 string) (*precompiled, error) {
	blob, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("precompiled_charsmap: %w", err)
	}
	if len(blob) < 4 {
		return nil, fmt.Errorf("precompiled_charsmap: %d bytes, want at least 4", len(blob))
	}
	size := int(binary.LittleEndian.Uint32(blob))
	if size%4 != 0 || size > len(blob)-4 || size == 0 {
		return nil, fmt.Errorf("precompiled_charsmap: trie size %d does not fit %d bytes", size, len(blob))
	}
	p := &precompiled{array: make([]uint32, size/4), normalized: string(blob[4+size:])}
	for i := range p.array {
		p.array[i] = binary.LittleEndian.Uint32(blob[4+4*i:])
	}
	return p, nil
}

// transform is the replacement of the shortest key that prefixes chunk, as
// spm_precompiled's common_prefix_search()[0]; ok is false when none does.
func (p *precompiled) transform(chunk string) (string, bool) {
	pos := uint32(0)
	unit := p.array[0]
	pos ^= unitOffset(unit)
	for i := 0; i < len(chunk); i++ {
		c := chunk[i]
		if c == 0 {
			break
		}
		pos ^= uint32(c)
		if int(pos) >= len(p.array) {
			return "", false
		}
		unit = p.array[pos]
		if unit&(1<<31|0xFF) != uint32(c) {
			return "", false
		}
		pos ^= unitOffset(unit)
		if (unit>>8)&1 == 1 {
			if int(pos) >= len(p.array) {
				return "", false
			}
			v := int(p.array[pos] & (1<<31 - 1))
			if v > len(p.normalized) {
				return "", false
			}
			end := strings.IndexByte(p.normalized[v:], 0)
			if end < 0 {
				end = len(p.normalized) - v
			}
			return p.normalized[v : v+end], true
		}
	}
	return "", false
}

func unitOffset(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }

// normalize applies the table per extended grapheme cluster: a cluster
// under 6 bytes with a mapping is replaced whole, any other cluster
// character by character (the reference's rule, which keeps combining
// marks after a mapped newline).
func (p *precompiled) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	refGraphemes(s, func(gr string) {
		if len(gr) < 6 {
			if r, ok := p.transform(gr); ok {
				b.WriteString(r)
				return
			}
		}
		for i, c := range gr {
			part := gr[i : i+len(string(c))]
			if r, ok := p.transform(part); ok {
				b.WriteString(r)
			} else {
				b.WriteString(part)
			}
		}
	})
	return b.String()
}
