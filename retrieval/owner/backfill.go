package owner

import (
	"errors"
	"fmt"
	"time"

	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/store"
)

// maxBackfillFails is how many embedder calls in a row may fail before
// the back-fill gives up until the next start: a model that is down
// should cost a few log lines, not one per batch of the whole store.
const maxBackfillFails = 3

var errGaveUp = errors.New("retrieval: back-fill gave up after repeated embedder failures")

// backfillRun is one back-fill's progress.
type backfillRun struct {
	done, total    int
	filled, failed int
	fails          int // consecutive failed embedder calls
}

// backfill gives a vector to every stored memory that has no usable one,
// namespace by namespace, page by page, BackfillBatch texts per embedder
// call. It runs after the start-up build, in the background, and stops
// when Close cancels the background context. Its errors are logged and counted, never
// returned: a memory without a vector is still searchable lexically. It
// returns how many vectors it stored.
func (o *Owner) backfill() int {
	if o.Embedder() == nil || !o.conf.Backfill || o.Dim() == 0 {
		return 0
	}
	names, err := o.Store().Namespaces()
	if err != nil {
		o.Logger().Error("memory back-fill skipped", "err", err)
		return 0
	}
	run := &backfillRun{}
	for _, ns := range names {
		n, err := o.Store().Count(ns)
		if err != nil {
			o.Logger().Error("memory back-fill skipped", "err", err)
			return 0
		}
		run.total += n
	}
	t0 := time.Now()
	for _, ns := range names {
		err := o.backfillSpace(ns, run)
		if o.Context().Err() != nil {
			o.Logger().Info("memory back-fill stopped by shutdown; it resumes at the next start",
				"filled", run.filled, "failed", run.failed, "looked_at", run.done, "total", run.total)
			return run.filled
		}
		if errors.Is(err, errGaveUp) {
			o.Logger().Error("memory back-fill gave up: the embedder failed repeatedly; the remaining memories stay lexical-only until the next start",
				"filled", run.filled, "failed", run.failed)
			return run.filled
		}
		if err != nil {
			o.Logger().Error("memory back-fill skipped the rest of a namespace", "namespace", ns, "err", err)
		}
	}
	o.Progress("backfill", run.total, run.total)
	if run.filled > 0 || run.failed > 0 {
		o.Logger().Info("memory back-fill done", "filled", run.filled, "failed", run.failed,
			"took", time.Since(t0).Round(time.Millisecond))
	}
	return run.filled
}

// backfillSpace back-fills one namespace.
func (o *Owner) backfillSpace(ns string, run *backfillRun) error {
	sp, err := o.space(ns, true)
	if err != nil {
		return err
	}
	if err := o.Context().Err(); err != nil {
		return err
	}
	for pg, err := range store.Pages(o.Store(), ns, o.PageSize(), true) {
		if err != nil {
			return fmt.Errorf("retrieval: back-fill %q after %q: %w", ns, pg.After, err)
		}
		if err := o.Context().Err(); err != nil {
			return err
		}
		var todo []store.Record
		for _, r := range pg.Records {
			if embed.Check(r.Vector, o.Dim()) != nil {
				todo = append(todo, r)
			}
		}
		for len(todo) > 0 {
			batch := todo[:min(len(todo), o.conf.BackfillBatch)]
			todo = todo[len(batch):]
			if err := o.backfillBatch(ns, sp, batch, run); err != nil {
				return err
			}
		}
		run.done += len(pg.Records)
		o.Progress("backfill", run.done, run.total)
	}
	return nil
}

// backfillBatch embeds one batch and stores the vectors of the memories
// that are still as they were read.
func (o *Owner) backfillBatch(ns string, sp *space, batch []store.Record, run *backfillRun) error {
	texts := make([]string, len(batch))
	for i, r := range batch {
		texts[i] = r.Memory.Text
	}
	vecs, err := o.Embedder().Embed(o.Context(), texts, false)
	if o.Context().Err() != nil {
		return o.Context().Err()
	}
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		sp.backfillFailed.Add(int64(len(batch)))
		run.failed += len(batch)
		run.fails++
		o.Logger().Warn("memory back-fill: embedding failed; these memories stay lexical-only",
			"namespace", ns, "memories", len(batch), "first_id", batch[0].Memory.ID, "err", fmt.Errorf("%w: %w", keep.ErrEmbed, err))
		if run.fails >= maxBackfillFails {
			return errGaveUp
		}
		return nil
	}
	run.fails = 0
	want := make(map[string][]float32, len(batch))
	text := make(map[string]string, len(batch))
	for i, r := range batch {
		if embed.Check(vecs[i], o.Dim()) != nil {
			// NaN, wrong length or all zeros: the embedder cannot give
			// this text a direction; it stays lexical-only.
			sp.backfillFailed.Add(1)
			run.failed++
			continue
		}
		want[r.Memory.ID], text[r.Memory.ID] = vecs[i], r.Memory.Text
	}
	n, err := o.fillVectors(ns, sp, want, text)
	run.filled += n
	return err
}

// fillVectors stores and indexes back-filled vectors under sp.Mu, each
// only if its memory still has the text that was embedded and still has
// no usable vector: a write since the page was read (a new text, or a
// vector of its own) wins, whichever order the two take the lock in.
func (o *Owner) fillVectors(ns string, sp *space, vecs map[string][]float32, texts map[string]string) (int, error) {
	if len(vecs) == 0 {
		return 0, nil
	}
	sp.Mu.Lock()
	defer sp.Mu.Unlock()
	written, err := o.Store().PutVectorsIf(ns, vecs, func(cur store.Record) bool {
		return cur.Memory.Text == texts[cur.Memory.ID] && embed.Check(cur.Vector, o.Dim()) != nil
	})
	if err != nil {
		return 0, fmt.Errorf("retrieval: back-fill %q: %w: %w", ns, keep.ErrStorage, err)
	}
	ix := sp.Indexes()
	for _, id := range written {
		if sp.touched != nil {
			sp.touched[id] = struct{}{}
		}
		ix.Vec.Delete(id)
		if err := ix.Vec.Add(id, vecs[id]); err != nil {
			sp.Dirty.Store(true) // stored but not indexed: Check rebuilds
		}
	}
	if len(written) > 0 {
		sp.noteWrite()
	}
	sp.backfilled.Add(int64(len(written)))
	return len(written), nil
}
