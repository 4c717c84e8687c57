package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestAnalyzerDue: an analysis is due once the rows written since the last
// one reach max(analyzeMinRows, the table's size then); one runs at a time;
// a failed one leaves the count for the next write.
func TestAnalyzerDue(t *testing.T) {
	type step struct {
		wrote int   // rows written
		due   bool  // analysis due after it
		done  int64 // when due: the size the analysis finds (-1: it fails)
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"first at the minimum", []step{{999, false, 0}, {1, true, 1000}, {999, false, 0}, {1, true, 2000}}},
		{"then at the table's size", []step{{5000, true, 5000}, {4999, false, 0}, {1, true, 10000}, {9999, false, 0}}},
		{"one big batch", []step{{250_000, true, 250_000}, {1000, false, 0}}},
		// A failed analysis, or one that left no statistics: the rows
		// written stand in for the table's size.
		{"failure", []step{{1000, true, -1}, {999, false, 0}, {1, true, -1}, {1999, false, 0}, {1, true, 4000}, {3999, false, 0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var a analyzer
			for i, s := range c.steps {
				if got := a.wrote(s.wrote); got != s.due {
					t.Fatalf("step %d (%d rows): due %v, want %v", i, s.wrote, got, s.due)
				}
				if s.due {
					if a.wrote(0) { // still due by the count, but one is running
						t.Fatalf("step %d: a second analysis while one runs", i)
					}
					a.done(s.done)
				}
			}
		})
	}
}

// TestAnalyzeAfterBulkWrites: PutBatch analyses rerankd_memories itself as
// a load grows the table (autovacuum is off for the table here, so only
// the store can), and afterwards the generic plan of the batch's
// existing-row read uses the primary key, not a scan of the namespace.
func TestAnalyzeAfterBulkWrites(t *testing.T) {
	url := newDB(t)
	s := open(t, url, Options{})
	c := sqlConn(t, url)
	batch := func(k int) {
		items := make([]store.Item, 100)
		for i := range items {
			items[i] = store.Item{Memory: mem("ns", fmt.Sprintf("m%05d", k*100+i), "text")}
		}
		must(t, s.PutBatch(items))
	}
	reltuples := func() int64 {
		var n float64
		if err := c.QueryRow(context.Background(), `SELECT reltuples FROM pg_class WHERE oid = 'rerankd_memories'::regclass`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return int64(n)
	}
	batch(0) // creates the schema
	exec(t, c, `ALTER TABLE rerankd_memories SET (autovacuum_enabled = off)`)
	for k := 1; k < 40; k++ {
		rows := int64(100 * (k + 1))
		want := int64(-1) // never analysed (PostgreSQL 14 and later)
		switch {
		case rows >= 4000:
			want = 4000
		case rows >= 2000:
			want = 2000
		case rows >= 1000:
			want = 1000
		}
		batch(k)
		if got := reltuples(); got != want {
			t.Fatalf("after %d rows: reltuples %d, want %d", rows, got, want)
		}
	}
	plan := genericPlan(t, c)
	if !strings.Contains(plan, "rerankd_memories_pkey") {
		t.Errorf("existing-row read after the analyses:\n%s\nwant an index scan of rerankd_memories_pkey", plan)
	}
}

// genericPlan is EXPLAIN of the generic plan PostgreSQL caches for
// PutBatch's existing-row read.
func genericPlan(t *testing.T, c *pgx.Conn) string {
	t.Helper()
	ctx := context.Background()
	exec(t, c, `SET plan_cache_mode = force_generic_plan`)
	exec(t, c, `PREPARE existing(text, text[]) AS SELECT id, deleted, vector IS NOT NULL FROM rerankd_memories WHERE ns = $1 AND id = ANY($2)`)
	defer exec(t, c, `DEALLOCATE existing`)
	rows, err := c.Query(ctx, `EXPLAIN EXECUTE existing('ns', '{m00001,m00002}')`)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestAnalyzeNotOwner: a role that may read and write the tables of a
// migrated database, but neither owns them nor may create tables, opens
// the store and gets PostgreSQL's warning instead of statistics. The store logs it, its
// writes succeed, and it tries again only as the table keeps growing, not
// on every write.
func TestAnalyzeNotOwner(t *testing.T) {
	url := newDB(t)
	owner := open(t, url, Options{})
	must(t, owner.Put(mem("ns", "first", "x"), nil)) // the schema
	c := sqlConn(t, url)
	exec(t, c, `ALTER TABLE rerankd_memories SET (autovacuum_enabled = off)`)
	role := fmt.Sprintf("writer_%d", time.Now().UnixNano())
	exec(t, c, `CREATE ROLE `+role+` LOGIN PASSWORD 'writer'`)
	t.Cleanup(func() {
		_, _ = c.Exec(context.Background(), `DROP OWNED BY `+role)
		_, _ = c.Exec(context.Background(), `DROP ROLE `+role)
	})
	exec(t, c, `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO `+role)
	exec(t, c, `GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO `+role)
	// No CREATE on the schema: a migrated database opens without it.
	u, err := neturl.Parse(url)
	must(t, err)
	u.User = neturl.UserPassword(role, "writer")
	var logs testenv.SyncBuffer
	w := open(t, u.String(), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for k := range 30 {
		items := make([]store.Item, 100)
		for i := range items {
			items[i] = store.Item{Memory: mem("ns", fmt.Sprintf("m%05d", k*100+i), "text")}
		}
		must(t, w.PutBatch(items))
	}
	// Attempts at 1000 rows written, then when as many again (2000) have
	// been written: two warnings for 3000 rows in 30 writes.
	if got := strings.Count(logs.String(), "left no statistics"); got != 2 {
		t.Errorf("%d warnings, want 2:\n%s", got, logs.String())
	}
	var n float64
	must(t, c.QueryRow(context.Background(), `SELECT reltuples FROM pg_class WHERE oid = 'rerankd_memories'::regclass`).Scan(&n))
	if n >= 0 {
		t.Errorf("reltuples %g: the table was analysed by a role that does not own it", n)
	}
}
