package tokenizer

// Tokenizer encodes text to Qwen-family token ids and back. Build one with
// Load or FromBytes; it is safe for concurrent use.
type Tokenizer struct {
	tokens []string       // id -> token (byte-level alphabet, or added-token content)
	vocab  map[string]int // model vocabulary (without added tokens)
	// pieceID replaces vocab for a Unigram model, whose trie already maps
	// pieces to ids (a second 250k-entry map cost ~10 MB per load).
	pieceID      func(string) (int, bool)
	merges       map[uint64]merge
	ignoreMerges bool // whole word in vocab wins before merging (HF ignore_merges)

	byteChar [256]string // byte -> its byte-level character
	byteID   [256]int32  // byte -> id of its single-byte token
	charByte map[rune]byte

	added     []addedToken
	addedByID map[int]int // id -> index in added
	matcher   *addedMatcher

	pad, eos, bos SpecialToken

	cache *wordCache

	// pipe is set for a Unigram or WordPiece tokenizer.json; the BPE
	// fields above are then unused except tokens, vocab (or lookup) and
	// the added tokens.
	pipe *pipeline
}

type merge struct {
	rank int32 // lower merges first
	id   int32 // id of the merged token
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

type addedToken struct {
	content string
	id      int
	special bool
}

// SpecialToken names a token read from tokenizer_config.json.
type SpecialToken struct {
	Content string
	ID      int
	Set     bool // false when the config names no such token
}

// Offset is a half-open byte range [Start, End) of the input text.
type Offset struct{ Start, End int }

// Encoding is the result of encoding one text.
type Encoding struct {
	IDs []int
	// Offsets[i] is the byte range of the input that produced IDs[i]. A token
	// holding part of a multi-byte character (byte-level BPE splits some)
	// reports the whole character, as Hugging Face does; tokens from a
	// character that NFC composed with its neighbours report the whole
	// composed sequence.
	Offsets []Offset
}

// VocabSize is the number of ids, added tokens included.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// Pad returns the padding token named in tokenizer_config.json.
func (t *Tokenizer) Pad() SpecialToken { return t.pad }

// EOS returns the end-of-sequence token named in tokenizer_config.json.
func (t *Tokenizer) EOS() SpecialToken { return t.eos }

// BOS returns the beginning-of-sequence token named in tokenizer_config.json.
func (t *Tokenizer) BOS() SpecialToken { return t.bos }

// TokenID returns the id of a token given in its stored form: an added
// token's content or a vocabulary entry in the byte-level alphabet.
func (t *Tokenizer) TokenID(token string) (int, bool) {
	for _, a := range t.added {
		if a.content == token {
			return a.id, true
		}
	}
	if t.pieceID != nil {
		return t.pieceID(token)
	}
	id, ok := t.vocab[token]
	return id, ok
}

// Token returns the stored form of id.
func (t *Tokenizer) Token(id int) (string, bool) {
	if id < 0 || id >= len(t.tokens) {
		return "", false
	}
	return t.tokens[id], true
}

// IsSpecial reports whether id is an added token marked special.
func (t *Tokenizer) IsSpecial(id int) bool {
	i, ok := t.addedByID[id]
	return ok && t.added[i].special
}
