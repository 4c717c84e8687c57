package model

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rerankd/rerankd/model/onnx"
	ort "github.com/yalue/onnxruntime_go"
)

// PrefixSession runs a model folder's shared-prefix graph
// (onnx.SharedPrefixFile): sequences that start with the same tokens (the
// pairs of one rerank request share the system prompt, instruction and
// query) are scored in one ONNX Runtime call that computes the shared
// prefix once and each sequence's remaining tokens once, packed without
// padding. It implements Engine, so the Scorer and the server's scheduler
// use it unchanged; it finds the shared prefixes itself (planGroups), which
// also covers batches that mix requests. Safe for concurrent use like
// Session.
type PrefixSession struct {
	sess *ort.DynamicAdvancedSession
	// callTokens is the fixed cost of one ORT call in token equivalents,
	// weighed against recomputing a shorter shared prefix when grouping.
	callTokens int
}

// prefixCallTokens: one call of a Qwen3-0.6B-sized graph costs a few
// milliseconds of fixed overhead (hundreds of kernels), about what a few
// tokens cost; merging two requests' groups to save a call is rarely worth
// recomputing their queries, so the value only breaks near ties.
const prefixCallTokens = 4

// OpenPrefixSession loads a shared-prefix graph. InitRuntime must have been
// called.
func OpenPrefixSession(path string, cfg SessionConfig) (*PrefixSession, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !ort.IsInitialized() {
		return nil, errors.New("onnx runtime not initialised: call InitRuntime first")
	}
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrIncompatibleModel, path, err)
	}
	inputs := []string{onnx.PrefixIDs, onnx.PackedIDs, onnx.PackedMask}
	var got []string
	for _, in := range ins {
		got = append(got, in.Name)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(inputs))
	if !slices.Equal(got, want) || len(outs) != 1 || outs[0].Name != onnx.OutputLogits || len(outs[0].Dimensions) != 1 {
		return nil, fmt.Errorf("%w: %s: inputs %v and outputs %v are not a shared-prefix graph (want inputs %v, output %s [batch])",
			ErrIncompatibleModel, path, got, outs, want, onnx.OutputLogits)
	}
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	defer release(opts)
	sess, err := ort.NewDynamicAdvancedSession(path, inputs, []string{onnx.OutputLogits}, opts)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &PrefixSession{sess: sess, callTokens: prefixCallTokens}, nil
}

// Logits scores seqs: one ORT call per group of sequences sharing a prefix.
func (s *PrefixSession) Logits(ctx context.Context, seqs [][]int) ([]float32, error) {
	for i, q := range seqs {
		if len(q) < 2 {
			// ORT fails (SIGFPE, not an error) on an empty prefix, and a
			// one-token sequence has nothing to share. Prompts are dozens.
			return nil, fmt.Errorf("sequence %d has %d tokens: the shared-prefix engine needs at least 2", i, len(q))
		}
	}
	out := make([]float32, len(seqs))
	for _, g := range planGroups(seqs, s.callTokens) {
		logits, err := s.runGroup(ctx, seqs, g)
		if err != nil {
			return nil, err
		}
		for k, i := range g.rows {
			out[i] = logits[k]
		}
	}
	return out, nil
}

// runGroup scores the rows of g, which all start with the same g.prefix
// tokens and have at least one token after them.
func (s *PrefixSession) runGroup(ctx context.Context, seqs [][]int, g prefixGroup) ([]float32, error) {
	first := seqs[g.rows[0]]
	prefix := make([]int64, g.prefix)
	for i, id := range first[:g.prefix] {
		prefix[i] = int64(id)
	}
	width, tokens := 0, 0
	for _, i := range g.rows {
		n := len(seqs[i]) - g.prefix
		width, tokens = max(width, n), tokens+n
	}
	ids := make([]int64, 0, tokens)
	mask := make([]int64, len(g.rows)*width)
	for b, i := range g.rows {
		for j, id := range seqs[i][g.prefix:] {
			ids = append(ids, int64(id))
			mask[b*width+j] = 1
		}
	}
	var inputs []ort.Value
	defer func() {
		for _, v := range inputs {
			release(v)
		}
	}()
	for _, in := range []struct {
		shape ort.Shape
		data  []int64
	}{
		{ort.NewShape(int64(g.prefix)), prefix},
		{ort.NewShape(int64(tokens)), ids},
		{ort.NewShape(int64(len(g.rows)), int64(width)), mask},
	} {
		t, err := ort.NewTensor(in.shape, in.data)
		if err != nil {
			return nil, fmt.Errorf("shared prefix input: %w", err)
		}
		inputs = append(inputs, t)
	}
	outputs := []ort.Value{nil}
	if err := runCtx(ctx, s.sess, inputs, outputs); err != nil {
		return nil, err
	}
	defer release(outputs[0])
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("output %q is %T, want a float32 tensor", onnx.OutputLogits, outputs[0])
	}
	data := t.GetData()
	if len(data) != len(g.rows) {
		return nil, fmt.Errorf("shared prefix graph returned %d logits for %d rows", len(data), len(g.rows))
	}
	return slices.Clone(data), nil
}

// Close releases the session.
func (s *PrefixSession) Close() error {
	if s.sess == nil {
		return nil
	}
	err := s.sess.Destroy()
	s.sess = nil
	return err
}

// prefixGroup is one ORT call: rows (indices into the batch) sharing their
// first prefix tokens.
type prefixGroup struct {
	rows   []int
	prefix int
}

// planGroups splits a batch into groups that share a prefix, minimising the
// tokens computed: a group costs its prefix once, every row's remaining
// tokens, and callTokens. Sorted lexicographically, sequences sharing a
// prefix are adjacent and a contiguous range shares the minimum of its
// neighbours' common prefixes, so an O(n²) dynamic programme over ranges
// finds the best split in that order. A group's prefix stops one token short
// of its shortest row (each row must score its own last token) and is never
// empty, so every row needs at least 2 tokens.
func planGroups(seqs [][]int, callTokens int) []prefixGroup {
	n := len(seqs)
	if n == 0 {
		return nil
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return slices.Compare(seqs[a], seqs[b]) })
	lcp := make([]int, n) // lcp[k]: common prefix of order[k-1] and order[k]
	for k := 1; k < n; k++ {
		a, b := seqs[order[k-1]], seqs[order[k]]
		for lcp[k] < min(len(a), len(b)) && a[lcp[k]] == b[lcp[k]] {
			lcp[k]++
		}
	}
	// best[j]: cheapest cost of order[:j]; from[j]: start of its last group.
	best, from := make([]int, n+1), make([]int, n+1)
	prefixOf := func(i, j int) int { // shared prefix of order[i:j], j-i >= 1
		shared, shortest := -1, len(seqs[order[i]])
		for k := i + 1; k < j; k++ {
			shared = minOr(shared, lcp[k])
			shortest = min(shortest, len(seqs[order[k]]))
		}
		if shared < 0 {
			return max(shortest-1, 0) // one row: all but its last token
		}
		return min(shared, shortest-1)
	}
	for j := 1; j <= n; j++ {
		best[j] = -1
		shared, shortest, total := -1, 0, 0
		for i := j - 1; i >= 0; i-- { // group order[i:j], grown leftwards
			l := len(seqs[order[i]])
			if i == j-1 {
				shortest = l
			} else {
				shared = minOr(shared, lcp[i+1])
				shortest = min(shortest, l)
			}
			total += l
			p := shortest - 1
			if shared >= 0 {
				p = min(shared, p)
			}
			if p < 1 && i < j-1 {
				break // an empty shared prefix: growing the range cannot help (p only shrinks)
			}
			p = max(p, 0) // a one-token row (Logits refuses it; BatchTokens still counts it)
			cost := best[i] + callTokens + total - (j-i-1)*p
			if best[j] < 0 || cost < best[j] {
				best[j], from[j] = cost, i
			}
		}
	}
	var groups []prefixGroup
	for j := n; j > 0; j = from[j] {
		i := from[j]
		groups = append(groups, prefixGroup{rows: slices.Clone(order[i:j]), prefix: prefixOf(i, j)})
	}
	slices.Reverse(groups)
	return groups
}

// minOr is min(a, b) where a < 0 means "unset".
func minOr(a, b int) int {
	if a < 0 {
		return b
	}
	return min(a, b)
}

// runCtx calls ONNX Runtime, terminating the run if ctx ends first.
func runCtx(ctx context.Context, sess *ort.DynamicAdvancedSession, inputs, outputs []ort.Value) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	opts, err := ort.NewRunOptions()
	if err != nil {
		return err
	}
	defer release(opts)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			_ = opts.Terminate() // the run may have finished already
		case <-done:
		}
	}()
	if err := sess.RunWithOptions(inputs, outputs, opts); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("onnx runtime: %w", err)
	}
	return nil
}

// BatchTokens reports what scoring one engine batch costs in tokens through
// the decoder's matrices: plain, every row padded to the longest
// (rows × width, what Session computes); shared, each shared prefix once
// plus every row's own tokens (what PrefixSession computes, packed). It
// measures padding waste and prefix reuse without running a model.
func BatchTokens(seqs [][]int) (plain, shared int) {
	width := 0
	for _, q := range seqs {
		width = max(width, len(q))
	}
	for _, g := range planGroups(seqs, prefixCallTokens) {
		shared += g.prefix
		for _, i := range g.rows {
			shared += len(seqs[i]) - g.prefix
		}
	}
	return len(seqs) * width, shared
}
