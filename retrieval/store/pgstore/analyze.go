package pgstore

import "sync"

// analyzeMinRows is the fewest rows a store writes before it analyses the
// memories table the first time.
const analyzeMinRows = 1000

// analyzer decides when a store analyses rerankd_memories itself.
//
// Why: pgx prepares PutBatch's existing-row read and GetMany on each
// connection, and after five executions PostgreSQL caches a generic plan
// built from the table's statistics. A table that was never analysed
// (a new database, a bulk load) gets a plan that scans the whole namespace
// by its changes index, so each write costs time in proportion to the
// namespace's size until an ANALYZE invalidates the plan, and autovacuum's
// first look can be a minute into the load (docs/perf/shared-store.md). So the
// store analyses the table whenever the rows it wrote since its last
// analysis reach the table's size then (at least analyzeMinRows): a load
// of N rows costs about log2(N/analyzeMinRows) analyses, each reading a
// bounded sample (300 x default_statistics_target rows).
type analyzer struct {
	mu      sync.Mutex
	base    int64 // the table's rows at this store's last analysis (0 before the first)
	since   int64 // rows written since
	running bool  // one analysis at a time
}

// wrote records n rows written and reports whether an analysis is due;
// when it is, the caller runs it and then calls done.
func (a *analyzer) wrote(n int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.since += int64(n)
	if a.running || a.since < max(analyzeMinRows, a.base) {
		return false
	}
	a.running = true
	return true
}

// done ends an analysis: rows is the table's size it found, negative when
// it failed or left no statistics. Then the rows written so far stand in
// for the size, so attempts still thin out as the table grows instead of
// repeating on every write.
func (a *analyzer) done(rows int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.running = false
	if rows < 0 {
		rows = a.base + a.since
	}
	a.base, a.since = rows, 0
}

// maybeAnalyze runs an analysis of rerankd_memories when n more written
// rows make one due. The write has committed by then, so a failure is
// logged and not returned: ANALYZE is an optimisation, and autovacuum's
// analysis stays the fallback. A role that does not own the table gets
// PostgreSQL's warning and no statistics, which is logged too.
func (s *Store) maybeAnalyze(n int) {
	if !s.analyze.wrote(n) {
		return
	}
	ctx, cancel := s.opCtx(s.closeCtx)
	defer cancel()
	rows := int64(-1)
	err := func() error {
		if _, err := s.pool.Exec(ctx, `ANALYZE rerankd_memories`); err != nil {
			return err
		}
		return s.pool.QueryRow(ctx, `SELECT reltuples::bigint FROM pg_class WHERE oid = 'rerankd_memories'::regclass`).Scan(&rows)
	}()
	switch {
	case err != nil:
		rows = -1
		s.logWarn("pgstore: analyzing rerankd_memories after a bulk write failed; autovacuum will", "err", err)
	case rows < 0:
		s.logWarn("pgstore: ANALYZE rerankd_memories left no statistics (does this role own the table?); autovacuum will")
	}
	s.analyze.done(rows)
}

func (s *Store) logWarn(msg string, args ...any) {
	if s.opts.Logger != nil {
		s.opts.Logger.Warn(msg, args...)
	}
}
