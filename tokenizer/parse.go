package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/go-json-experiment/json/jsontext"
)

// A Qwen tokenizer.json is 11 MB, almost all of it the vocabulary (151,643
// entries) and the merges (151,387 pairs). Decoding those through
// encoding/json into a map and []json.RawMessage, then into sugarme's merge
// table, allocated ~135 MB and took most of every model's start-up. The
// parser below streams the two big fields with jsontext (no value is copied
// out of the input), keeps every vocabulary string in one backing string and
// resolves merges straight into the id-pair table. The small fields still go
// through encoding/json. reference_load_test.go keeps the old loader and
// checks that both build the same tables.

// parsedFile is tokenizer.json with the vocabulary and merges resolved.
type parsedFile struct {
	fileJSON // AddedTokens, Normalizer, PreTokenizer, Decoder, Model (without Vocab/Merges)
	vocab    map[string]int
	merges   map[uint64]merge
	// mergesErr is kept apart so that build reports it with every other
	// problem of the file.
	mergesErr error
}

// decoderOpts: duplicate names are allowed because a map keeps the last
// value, as both encoding/json and the reference (serde into a HashMap) do;
// tracking names would also cost a set of 151k strings.
var decoderOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true)}

// parseFile reads the whole of tokenizer.json in one pass. Fields it does
// not use are skipped, as the reference's deserializer skips them.
func parseFile(data []byte) (*parsedFile, error) {
	d := jsontext.NewDecoder(bytes.NewBuffer(data), decoderOpts...)
	f := &parsedFile{}
	var mergesRaw []byte // merges met before the vocabulary: resolved at the end
	err := readObject(d, func(name string) error {
		var err error
		switch name {
		case "added_tokens":
			var v jsontext.Value
			if v, err = d.ReadValue(); err == nil {
				err = json.Unmarshal(v, &f.AddedTokens)
			}
		case "normalizer":
			f.Normalizer, err = rawValue(d, data)
		case "pre_tokenizer":
			f.PreTokenizer, err = rawValue(d, data)
		case "decoder":
			f.Decoder, err = rawValue(d, data)
		case "model":
			mergesRaw, err = f.readModel(d, data)
		default:
			err = d.SkipValue()
		}
		return err
	})
	if err == nil {
		err = checkEnd(d)
	}
	if err != nil {
		return nil, err
	}
	if f.vocab == nil {
		f.vocab = map[string]int{}
	}
	if f.merges == nil {
		md := jsontext.NewDecoder(bytes.NewBuffer(mergesRaw), decoderOpts...)
		if f.merges, f.mergesErr, err = readMerges(md, f.vocab); err == nil {
			err = checkEnd(md)
		}
		if err != nil {
			return nil, fmt.Errorf("model: merges: %w", err)
		}
	}
	return f, nil
}

// readModel decodes the model object. The vocabulary and the merges are
// streamed; merges that come first are returned raw, to be resolved once
// the vocabulary is known (JSON does not order an object's fields).
func (f *parsedFile) readModel(d *jsontext.Decoder, data []byte) (mergesRaw []byte, err error) {
	if d.PeekKind() == 'n' {
		_, err := d.ReadValue()
		return nil, err
	}
	// The small fields are decoded by encoding/json from a copy of the
	// object without the two big ones, so their rules (types, null) stay
	// the standard ones.
	small := []byte{'{'}
	err = readObject(d, func(name string) error {
		var err error
		switch {
		case name == "vocab":
			f.vocab, err = readVocab(d)
		case name == "merges" && f.vocab != nil:
			f.merges, f.mergesErr, err = readMerges(d, f.vocab)
		case name == "merges":
			mergesRaw, err = rawValue(d, data)
		default:
			var v jsontext.Value
			if v, err = d.ReadValue(); err != nil {
				return err
			}
			if len(small) > 1 {
				small = append(small, ',')
			}
			if small, err = jsontext.AppendQuote(small, name); err != nil {
				return err
			}
			small = append(append(small, ':'), v...)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(append(small, '}'), &f.Model); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return mergesRaw, nil
}

// readObject reads one JSON object, calling fn after each name; fn must
// consume the value. Errors name the field they occurred in.
func readObject(d *jsontext.Decoder, fn func(name string) error) error {
	if err := expect(d, '{'); err != nil {
		return err
	}
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		if err := fn(name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return expect(d, '}')
}

// rawValue reads the next value and returns it as a sub-slice of data,
// which the decoder reads in place (it is given a *bytes.Buffer over data).
func rawValue(d *jsontext.Decoder, data []byte) ([]byte, error) {
	start := d.InputOffset()
	if _, err := d.ReadValue(); err != nil {
		return nil, err
	}
	return bytes.TrimLeft(data[start:d.InputOffset()], " \t\r\n:,"), nil
}

func expect(d *jsontext.Decoder, kind jsontext.Kind) error {
	if k := d.PeekKind(); k != kind {
		if k == 0 {
			_, err := d.ReadToken()
			return err
		}
		return fmt.Errorf("want %v, found %v", kind, k)
	}
	_, err := d.ReadToken()
	return err
}

func checkEnd(d *jsontext.Decoder) error {
	if _, err := d.ReadToken(); err == nil {
		return errors.New("unexpected data after the JSON value")
	} else if !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// vocabEntry locates one token in the vocabulary's backing string.
type vocabEntry struct {
	start, end int32
	id         int
}

// readVocab reads {"token": id, ...}. Every token is unquoted into one
// buffer that becomes one string, so the map's keys cost no allocation of
// their own.
func readVocab(d *jsontext.Decoder) (map[string]int, error) {
	if d.PeekKind() == 'n' {
		_, err := d.ReadValue()
		return map[string]int{}, err
	}
	if err := expect(d, '{'); err != nil {
		return nil, err
	}
	// Sized for a Qwen vocabulary, which fits without growing.
	arena := make([]byte, 0, 1<<20)
	entries := make([]vocabEntry, 0, 1<<18)
	for d.PeekKind() == '"' {
		name, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		start := len(arena)
		if arena, err = jsontext.AppendUnquote(arena, name); err != nil {
			return nil, err
		}
		if len(arena) > math.MaxInt32 {
			return nil, errors.New("vocabulary over 2 GB")
		}
		num, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		id, err := parseID(num)
		if err != nil {
			return nil, fmt.Errorf("token %q: %w", arena[start:], err)
		}
		entries = append(entries, vocabEntry{start: int32(start), end: int32(len(arena)), id: id})
	}
	if err := expect(d, '}'); err != nil {
		return nil, err
	}
	all := string(arena)
	vocab := make(map[string]int, len(entries))
	for _, e := range entries {
		vocab[all[e.start:e.end]] = e.id
	}
	return vocab, nil
}

// parseID reads a non-negative integer id (a JSON number without fraction
// or exponent: the reference deserializes ids as u32).
func parseID(num jsontext.Value) (int, error) {
	if num.Kind() != '0' {
		return 0, fmt.Errorf("id %s is not a number", num)
	}
	id := 0
	for i, c := range num {
		if c == '-' && i == 0 {
			return 0, fmt.Errorf("negative id %s", num)
		}
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("id %s is not an integer", num)
		}
		id = id*10 + int(c-'0')
		if id > math.MaxInt32 {
			return 0, fmt.Errorf("id %s out of range", num)
		}
	}
	return id, nil
}

// readMerges resolves the merges array — entries "a b" (older files) or
// ["a", "b"] (newer ones, which allow a space inside a token) — into the
// id-pair table. A merge's rank is its position. As in the reference, a
// merge naming a token outside the vocabulary is an error, and a repeated
// pair keeps its last rank. Such an error (bad) does not stop the read, so
// it is reported beside the file's other problems; a syntax error (err)
// does.
func readMerges(d *jsontext.Decoder, vocab map[string]int) (out map[uint64]merge, bad, err error) {
	out = make(map[uint64]merge, len(vocab))
	switch d.PeekKind() {
	case 'n':
		_, err := d.ReadValue()
		return out, nil, err
	case 0:
		return out, nil, nil // nothing: an absent field
	}
	if err := expect(d, '['); err != nil {
		return nil, nil, err
	}
	var buf []byte // a's bytes then b's: the merged token, for the lookup
	for i := 0; d.PeekKind() != ']'; i++ {
		var split int
		switch d.PeekKind() {
		case '"':
			if buf, err = readString(d, buf[:0]); err != nil {
				return nil, nil, fmt.Errorf("merge %d: %w", i, err)
			}
			split = bytes.IndexByte(buf, ' ')
			if split < 0 || bytes.IndexByte(buf[split+1:], ' ') >= 0 {
				return nil, nil, fmt.Errorf("merge %d: want \"a b\", got %q", i, buf)
			}
			buf = append(buf[:split], buf[split+1:]...)
		case '[':
			if buf, split, err = readPair(d, buf[:0]); err != nil {
				return nil, nil, fmt.Errorf("merge %d: %w", i, err)
			}
		default:
			if _, err := d.ReadValue(); err != nil {
				return nil, nil, fmt.Errorf("merge %d: %w", i, err)
			}
			return nil, nil, fmt.Errorf("merge %d: want \"a b\" or [\"a\", \"b\"]", i)
		}
		if bad != nil {
			continue
		}
		a, okA := vocab[string(buf[:split])]
		b, okB := vocab[string(buf[split:])]
		id, ok := vocab[string(buf)]
		switch {
		case !okA || !okB:
			bad = fmt.Errorf("model.merges: merge %d: %q + %q: token not in the vocabulary", i, buf[:split], buf[split:])
		case !ok:
			bad = fmt.Errorf("model.merges: merge %d: merged token %q is not in the vocabulary", i, buf)
		default:
			out[pairKey(int32(a), int32(b))] = merge{rank: int32(i), id: int32(id)}
		}
	}
	return out, bad, expect(d, ']')
}

func readString(d *jsontext.Decoder, dst []byte) ([]byte, error) {
	v, err := d.ReadValue()
	if err != nil {
		return dst, err
	}
	if v.Kind() != '"' {
		return dst, fmt.Errorf("want a string, found %v", v.Kind())
	}
	return jsontext.AppendUnquote(dst, v)
}

// readPair reads ["a", "b"] into dst as a's bytes then b's, and returns
// where b starts.
func readPair(d *jsontext.Decoder, dst []byte) ([]byte, int, error) {
	if err := expect(d, '['); err != nil {
		return dst, 0, err
	}
	dst, err := readString(d, dst)
	if err != nil {
		return dst, 0, err
	}
	split := len(dst)
	if dst, err = readString(d, dst); err != nil {
		return dst, 0, err
	}
	if d.PeekKind() != ']' {
		return dst, 0, errors.New(`want a pair ["a", "b"], found more than two entries`)
	}
	return dst, split, expect(d, ']')
}
