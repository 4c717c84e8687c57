package tokenizer

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestEncodeContextStops: every encoding that takes a context (BPE,
// WordPiece, Unigram; single, pair, user parts) returns the context's
// error, wrapped, when it is done, and with a live context gives exactly
// the ids of the plain call. The texts are huge (the size a request body
// may carry), so a check only at the start or the end would not do: a
// done context must stop the word loop itself, which the cancelled runs
// show by producing fewer ids than the whole text has.
func TestEncodeContextStops(t *testing.T) {
	bert, err := Load("testdata/wordpiece/bert-uncased.json")
	if err != nil {
		t.Fatal(err)
	}
	xlmr, err := Load("testdata/unigram/xlmr-current.json")
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("garden river stone ", 20_000)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		tok  *Tokenizer
		run  func(context.Context, *Tokenizer) ([]int, error)
	}{
		{"bpe user parts", qwen(t), func(ctx context.Context, tk *Tokenizer) ([]int, error) {
			return tk.EncodeIDsUserContext(ctx, []Part{{Text: "Document: "}, {Text: huge, User: true}}, true)
		}},
		{"wordpiece single", bert, func(ctx context.Context, tk *Tokenizer) ([]int, error) {
			e, err := tk.EncodeSingleContext(ctx, huge, 0)
			return e.IDs, err
		}},
		{"wordpiece pair", bert, func(ctx context.Context, tk *Tokenizer) ([]int, error) {
			e, err := tk.EncodePairContext(ctx, "query", huge, 0, LongestFirst)
			return e.IDs, err
		}},
		{"unigram pair", xlmr, func(ctx context.Context, tk *Tokenizer) ([]int, error) {
			e, err := tk.EncodePairContext(ctx, "query", huge, 0, LongestFirst)
			return e.IDs, err
		}},
		{"bpe pair (no post-processor)", qwen(t), func(ctx context.Context, tk *Tokenizer) ([]int, error) {
			e, err := tk.EncodePairContext(ctx, "query", huge, 0, LongestFirst)
			return e.IDs, err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			whole, err := c.run(context.Background(), c.tok)
			if err != nil || len(whole) < 60_000 {
				t.Fatalf("live context: %d ids, %v", len(whole), err)
			}
			ids, err := c.run(cancelled, c.tok)
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "tokenize") {
				t.Fatalf("cancelled context: error %v, want context.Canceled wrapped by tokenize", err)
			}
			if len(ids) >= len(whole) {
				t.Errorf("cancelled context: %d ids of %d: the whole text was encoded", len(ids), len(whole))
			}
			deadline, stop := context.WithTimeout(context.Background(), 0)
			defer stop()
			if _, err := c.run(deadline, c.tok); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("expired deadline: %v, want context.DeadlineExceeded", err)
			}
		})
	}
	// Plain calls are the live-context calls.
	a, b := qwen(t).EncodeIDsUser([]Part{{Text: huge[:500], User: true}}, true), qwen(t).EncodeIDs(huge[:500])
	if len(a) != len(b) {
		t.Errorf("EncodeIDsUser %d ids, EncodeIDs %d", len(a), len(b))
	}
}
