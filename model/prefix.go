package model

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/internal/batching"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// PrefixSession runs a model folder's shared-prefix graph
// (onnx.SharedPrefixFile): sequences that start with the same tokens (the
// pairs of one rerank request share the system prompt, instruction and
// query) are scored in one ONNX Runtime call that computes the shared
// prefix once and each sequence's remaining tokens once, packed without
// padding. It implements rerank.Engine, so rerank.Scorer and the server's
// scheduler use it unchanged; it finds the shared prefixes itself (planGroups), which
// also covers batches that mix requests.
//
// With a cache (cacheBytes > 0 and a graph with past/present K/V inputs),
// the K/V of each call's prefix is kept for later calls: a request with the
// same system prompt and instruction as an earlier one computes only its
// query's tokens of the prefix. Scores do not change (tests: 1e-5). Graphs
// written before past K/V existed (inputs prefix_ids, input_ids,
// attention_mask only) still load and run without the cache. Safe for
// concurrent use like Session.
type PrefixSession struct {
	sess *ort.DynamicAdvancedSession
	// callTokens is the fixed cost of one ORT call in token equivalents,
	// weighed against recomputing a shorter shared prefix when grouping.
	callTokens int
	// past: the graph takes past_key/past_value (even when the cache is
	// off, they must be given, empty).
	past bool
	// A K/V tensor is [kvLayers, kvHeads, tokens, kvInner]; kvOuter =
	// kvLayers*kvHeads.
	kvLayers, kvHeads, kvInner, kvOuter int
	cache                               *kvCache // nil: no cross-request cache
	// bypass runs calls as if there were no cache (neither read nor
	// written), so a benchmark can measure the cache's gain on one session.
	bypass atomic.Bool
	// keepOrder passes a group's rows in the caller's order instead of
	// longest first (tests: the graph is right for any order).
	keepOrder bool
}

// SetCacheBypass turns the cross-request cache off (true) or back on for
// later calls, without dropping what it holds; for measurements.
func (s *PrefixSession) SetCacheBypass(on bool) { s.bypass.Store(on) }

// prefixCallTokens: one call of a Qwen3-0.6B-sized graph costs a few
// milliseconds of fixed overhead (hundreds of kernels), about what a few
// tokens cost; merging two requests' groups to save a call is rarely worth
// recomputing their queries, so the value only breaks near ties.
const prefixCallTokens = 4

// OpenPrefixSession loads a shared-prefix graph with a cross-request prefix
// cache of at most cacheBytes (0: none). InitRuntime must have been called.
func OpenPrefixSession(path string, cfg SessionConfig, cacheBytes int64) (*PrefixSession, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cacheBytes < 0 {
		return nil, fmt.Errorf("prefix cache of %d bytes: want >= 0", cacheBytes)
	}
	if !ort.IsInitialized() {
		return nil, errors.New("onnx runtime not initialised: call InitRuntime first")
	}
	ins, outs, err := graphIO(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrIncompatibleModel, path, err)
	}
	s := &PrefixSession{callTokens: prefixCallTokens}
	inputs, outputs, err := s.checkIO(ins, outs)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrIncompatibleModel, path, err)
	}
	if s.past && cacheBytes > 0 {
		s.cache = newKVCache(cacheBytes, int64(2*4*s.kvOuter*s.kvInner))
	} else {
		outputs = outputs[:1] // logits only: nothing would keep the K/V
	}
	if s.sess, err = openSession(path, inputs, outputs, cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// checkIO accepts the current graph (with past/present K/V) and the one
// before it (without), setting s.past and the K/V layout.
func (s *PrefixSession) checkIO(ins, outs []ort.InputOutputInfo) (inputs, outputs []string, err error) {
	base := []string{onnx.PrefixIDs, onnx.PackedIDs, onnx.PackedMask}
	withPast := append(slices.Clone(base), onnx.PastKey, onnx.PastValue)
	var got, gotOut []string
	for _, in := range ins {
		got = append(got, in.Name)
	}
	for _, o := range outs {
		gotOut = append(gotOut, o.Name)
	}
	slices.Sort(got)
	switch {
	case slices.Equal(got, slices.Sorted(slices.Values(base))) && slices.Equal(gotOut, []string{onnx.OutputLogits}):
		return base, gotOut, nil
	case slices.Equal(got, slices.Sorted(slices.Values(withPast))) &&
		slices.Equal(gotOut, []string{onnx.OutputLogits, onnx.PresentKey, onnx.PresentValue}):
		i := slices.IndexFunc(ins, func(in ort.InputOutputInfo) bool { return in.Name == onnx.PastKey })
		if d := ins[i].Dimensions; len(d) == 4 && d[0] > 0 && d[1] > 0 && d[3] > 0 {
			s.past, s.kvLayers, s.kvHeads, s.kvInner, s.kvOuter = true, int(d[0]), int(d[1]), int(d[3]), int(d[0]*d[1])
			return withPast, gotOut, nil
		}
		return nil, nil, fmt.Errorf("%s has dimensions %v, want [layers, kv_heads, past, head_dim] with fixed layers, heads and head_dim",
			onnx.PastKey, ins[i].Dimensions)
	}
	return nil, nil, fmt.Errorf("inputs %v and outputs %v are not a shared-prefix graph (want inputs %v, outputs %s, %s, %s)",
		got, gotOut, withPast, onnx.OutputLogits, onnx.PresentKey, onnx.PresentValue)
}

// CacheStats reports the cross-request prefix cache's counters; ok is false
// when the session has none.
func (s *PrefixSession) CacheStats() (st rerank.PrefixCacheStats, ok bool) {
	if s.cache == nil {
		return st, false
	}
	return s.cache.snapshot(), true
}

// Logits scores seqs: one ORT call per group of sequences sharing a prefix.
// A decoder has no token types: types must be nil.
func (s *PrefixSession) Logits(ctx context.Context, seqs, types [][]int) ([]float32, error) {
	if err := batching.CheckNoTypes(types); err != nil {
		return nil, err
	}
	for i, q := range seqs {
		if len(q) < 2 {
			// ORT fails (SIGFPE, not an error) on an empty prefix, and a
			// one-token sequence has nothing to share. Prompts are dozens.
			return nil, fmt.Errorf("sequence %d has %d tokens: the shared-prefix engine needs at least 2", i, len(q))
		}
	}
	out := make([]float32, len(seqs))
	for _, g := range planGroups(seqs, s.callTokens) {
		if !s.keepOrder {
			// Longest first: the graph pads each bucket of consecutive rows
			// (onnx.Options.AttentionBuckets) to its own longest row.
			slices.SortStableFunc(g.rows, func(a, b int) int { return cmp.Compare(len(seqs[b]), len(seqs[a])) })
		}
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
// tokens and have at least one token after them. With the cache, the
// longest cached start of the prefix is passed as past K/V, all but its
// last token at most: ONNX Runtime fails (SIGFPE, measured) on an empty
// prefix section, apparently in a Transpose of the empty tensor. The
// prefix's K/V are stored afterwards unless already cached.
//
// Scores do not depend on the cache beyond float32 rounding: a token
// computed in a block of the prefix and the same token computed alone
// after cached K/V sum in different orders, so a repeated request agrees
// with its first run within ~1e-7, not bit for bit (serve's determinism
// test); --prefix-cache-mb 0 restores bitwise repeats.
func (s *PrefixSession) runGroup(ctx context.Context, seqs [][]int, g prefixGroup) ([]float32, error) {
	first := seqs[g.rows[0]]
	var hit *kvEntry
	reused := 0
	useCache := s.cache != nil && !s.bypass.Load()
	if useCache {
		hit, reused = s.cache.lookup(first[:g.prefix], g.prefix-1)
		s.cache.record(reused, g.prefix-reused)
	}
	prefix := make([]int64, g.prefix-reused)
	for i, id := range first[reused:g.prefix] {
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
		{ort.NewShape(int64(len(prefix))), prefix},
		{ort.NewShape(int64(tokens)), ids},
		{ort.NewShape(int64(len(g.rows)), int64(width)), mask},
	} {
		t, err := ort.NewTensor(in.shape, in.data)
		if err != nil {
			return nil, fmt.Errorf("shared prefix input: %w", err)
		}
		inputs = append(inputs, t)
	}
	if s.past {
		var k, v []float32
		if hit != nil {
			full := len(hit.tokens)
			k = sliceKV(hit.k, s.kvOuter, full, reused, s.kvInner)
			v = sliceKV(hit.v, s.kvOuter, full, reused, s.kvInner)
		}
		for _, data := range [][]float32{k, v} {
			t, err := ort.NewTensor(s.kvShape(reused), data)
			if err != nil {
				return nil, fmt.Errorf("shared prefix past K/V: %w", err)
			}
			inputs = append(inputs, t)
		}
	}
	outputs := []ort.Value{nil}
	if s.cache != nil {
		outputs = append(outputs, nil, nil)
	}
	if err := runCtx(ctx, s.sess, inputs, outputs); err != nil {
		return nil, err
	}
	defer func() {
		for _, o := range outputs {
			release(o)
		}
	}()
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("output %q is %T, want a float32 tensor", onnx.OutputLogits, outputs[0])
	}
	data := t.GetData()
	if len(data) != len(g.rows) {
		return nil, fmt.Errorf("shared prefix graph returned %d logits for %d rows", len(data), len(g.rows))
	}
	if useCache && (hit == nil || len(hit.tokens) < g.prefix || reused < g.prefix-1) {
		if err := s.keep(first[:g.prefix], outputs[1], outputs[2]); err != nil {
			return nil, err
		}
	}
	return slices.Clone(data), nil
}

// kvShape is a past K/V tensor's shape for n tokens.
func (s *PrefixSession) kvShape(n int) ort.Shape {
	return ort.NewShape(int64(s.kvLayers), int64(s.kvHeads), int64(n), int64(s.kvInner))
}

// keep copies the present K/V of prefix out of ORT and caches them.
func (s *PrefixSession) keep(prefix []int, k, v ort.Value) error {
	want := s.kvOuter * len(prefix) * s.kvInner
	e := &kvEntry{tokens: slices.Clone(prefix)}
	for i, o := range []ort.Value{k, v} {
		t, ok := o.(*ort.Tensor[float32])
		if !ok || len(t.GetData()) != want {
			return fmt.Errorf("shared prefix graph's present K/V output %d is %T, want %d float32 values", i, o, want)
		}
		if i == 0 {
			e.k = slices.Clone(t.GetData())
		} else {
			e.v = slices.Clone(t.GetData())
		}
	}
	s.cache.add(e)
	return nil
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
	return len(seqs) * width, packedTokens(seqs, prefixCallTokens)
}

// packedTokens is what one PrefixSession call over seqs computes without
// the cache: each group's shared prefix once, plus every row's own tokens.
func packedTokens(seqs [][]int, callTokens int) int {
	n := 0
	for _, g := range planGroups(seqs, callTokens) {
		n += g.prefix
		for _, i := range g.rows {
			n += len(seqs[i]) - g.prefix
		}
	}
	return n
}

// Cost is what one call over seqs computes (tokens through the matrices,
// the cache aside): the scheduler budgets and groups its batches by it,
// instead of assuming rows × longest row. Shared prefixes count once and
// rows are packed, so for one request's pairs it is far below the padded
// size.
func (s *PrefixSession) Cost(seqs [][]int) int { return packedTokens(seqs, s.callTokens) }
