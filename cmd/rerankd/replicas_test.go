package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/client"
	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/retrieval/store/pgstore"
)

// replica is one `rerankd serve` process (this test binary standing in
// for rerankd) on a shared PostgreSQL store.
type replica struct {
	cmd    *exec.Cmd
	base   string
	c      *client.Client
	stderr *testenv.SyncBuffer
	done   chan struct{} // closed when the process has exited
}

func startReplica(t *testing.T, storeURL string, args ...string) *replica {
	t.Helper()
	argv := append([]string{"serve", "--addr", "127.0.0.1:0", "--store", storeURL, "--follow-poll", "200ms"}, args...)
	cmd := exec.Command(os.Args[0], argv...)
	cmd.Env = append(os.Environ(), "RERANKD_TEST_AS_CLI=1")
	r := &replica{cmd: cmd, stderr: &testenv.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = r.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		r.kill()
		if t.Failed() {
			log := r.stderr.String()
			t.Logf("replica %s stderr (last 3000 bytes):\n%s", r.base, log[max(0, len(log)-3000):])
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("replica: no banner: %v; stderr %s", err, r.stderr.String())
	}
	m := regexp.MustCompile(`on (http://\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("replica banner %q", line)
	}
	r.base = m[1]
	cfg := client.DefaultConfig(r.base)
	cfg.MaxRetries = -1 // the test counts 503s and retries itself
	if r.c, err = client.New(cfg); err != nil {
		t.Fatal(err)
	}
	return r
}

// kill sends SIGKILL and waits for the process to be gone.
func (r *replica) kill() {
	_ = r.cmd.Process.Kill()
	<-r.done
}

func (r *replica) dead() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// retryable reports whether err is a failure the test retries: a 503
// (store unavailable or catching up) or a transport error (the replica
// was killed).
func retryable(err error) bool {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.Status == 503
	}
	return err != nil
}

// cluster tracks what the replicas acknowledged: the model of the store.
type cluster struct {
	mu    sync.Mutex
	reps  []*replica
	model map[string]map[string]string // namespace → id → text, acknowledged
	// Counters for the note: writes acknowledged, answers 503 with
	// Retry-After, transport failures (killed replica), read-your-writes
	// checks made and failed.
	acked, unavailable, transport, ryw, rywFailed atomic.Int64
}

// pick returns a live replica, preferring index i.
func (c *cluster) pick(i int) *replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.reps {
		if r := c.reps[(i+k)%len(c.reps)]; !r.dead() {
			return r
		}
	}
	return nil
}

// do runs op against replica i (or the next live one) until it succeeds:
// 503s and transport errors are retried (after the Retry-After second for
// a 503); any other error fails the test. It returns whether some attempt
// failed, so that a delete retried after an uncertain attempt may find
// the memory already gone.
func (c *cluster) do(t *testing.T, ctx context.Context, i int, op func(*replica) error) (uncertain bool) {
	for {
		r := c.pick(i)
		if r == nil {
			t.Error("no replica alive")
			return
		}
		err := op(r)
		if err == nil {
			return uncertain
		}
		if ctx.Err() != nil {
			t.Errorf("gave up: %v", err)
			return
		}
		if !retryable(err) {
			t.Errorf("replica %s: %v", r.base, err)
			return
		}
		uncertain = true
		var ce *client.Error
		if errors.As(err, &ce) {
			c.unavailable.Add(1)
			time.Sleep(200 * time.Millisecond) // Retry-After is 1 s; a shorter wait keeps the test brisk
		} else {
			c.transport.Add(1)
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestReplicas: three `rerankd serve` processes on one PostgreSQL database.
// Writers on every replica add (singly and in batches), replace and delete
// memories of shared namespaces while other goroutines check
// read-your-writes across replicas (a memory acknowledged by one replica
// is found by a search on another that starts after). Meanwhile one
// replica is killed with SIGKILL (and a new one started), PostgreSQL is
// stopped for a second and started again, and later killed outright. At the end every replica lists and searches the same
// memories, which are exactly the acknowledged writes, as is the database.
func TestReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and three rerankd processes")
	}
	srv := pgtest.Start(t)
	dbURL := srv.NewDB(t)
	c := &cluster{model: map[string]map[string]string{}}
	for range 3 {
		c.reps = append(c.reps, startReplica(t, dbURL))
	}
	namespaces := []string{"alpha", "beta", "gamma"}
	for _, ns := range namespaces {
		c.model[ns] = map[string]string{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stop := make(chan struct{})
	var wg sync.WaitGroup

	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			writer(t, ctx, c, w, namespaces, stop)
		}()
	}
	for k := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			readYourWrites(t, ctx, c, k, stop)
		}()
	}

	// Faults: SIGKILL a replica mid-run and start a new one; restart
	// PostgreSQL under load.
	time.Sleep(2 * time.Second)
	c.reps[2].kill()
	t.Logf("replica 2 killed (SIGKILL) after %d acknowledged writes", c.acked.Load())
	time.Sleep(time.Second)
	// A restart with a second of downtime, so that requests meet it.
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL stopped after %d acknowledged writes", c.acked.Load())
	time.Sleep(time.Second)
	before := c.unavailable.Load()
	if err := srv.StartAgain(); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL started again after %d acknowledged writes", c.acked.Load())
	if c.unavailable.Load() == before && c.unavailable.Load() == 0 {
		t.Error("no request was answered 503 while PostgreSQL was down")
	}
	nr := startReplica(t, dbURL)
	c.mu.Lock()
	c.reps[2] = nr
	c.mu.Unlock()
	time.Sleep(1500 * time.Millisecond)
	// A crash of PostgreSQL itself (SIGKILL of every server process, then
	// crash recovery): acknowledged writes are committed, so they survive.
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL killed after %d acknowledged writes", c.acked.Load())
	time.Sleep(500 * time.Millisecond)
	if err := srv.StartAgain(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}

	// Every replica holds exactly the model, by listing and by search.
	for i, r := range c.reps {
		for _, ns := range namespaces {
			got := listAll(t, ctx, r, ns)
			if !maps.Equal(got, c.model[ns]) {
				t.Errorf("replica %d namespace %s: lists %d memories, %d acknowledged (first difference: %s)", i, ns, len(got), len(c.model[ns]), firstDiff(got, c.model[ns]))
			}
		}
	}
	for _, ns := range namespaces {
		for _, q := range []string{"apple", "banana cherry", "w1 replaced", "memory"} {
			var first []string
			for i, r := range c.reps {
				var ids []string
				c.do(t, ctx, i, func(*replica) error {
					res, err := r.c.Search(ctx, api.SearchRequest{Namespace: ns, Query: q, TopK: ptr(50)})
					if err != nil {
						return err
					}
					ids = ids[:0]
					for _, h := range res.Results {
						ids = append(ids, h.ID)
					}
					return nil
				})
				if i == 0 {
					first = ids
				} else if !slices.Equal(ids, first) {
					t.Errorf("search %q in %s: replica %d answers %v, replica 0 %v", q, ns, i, ids, first)
				}
			}
		}
	}
	// The database holds exactly the acknowledged writes.
	st, err := pgstore.Open(dbURL, pgstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	found := 0
	for _, ns := range namespaces {
		for id, text := range c.model[ns] {
			m, err := st.Get(ns, id)
			if err != nil || m.Text != text {
				t.Errorf("database %s/%s: %q, %v; acknowledged %q", ns, id, m.Text, err, text)
				continue
			}
			found++
		}
		if n, err := st.Count(ns); err != nil || n != len(c.model[ns]) {
			t.Errorf("database %s holds %d memories (%v), %d acknowledged", ns, n, err, len(c.model[ns]))
		}
	}
	t.Logf("writes acknowledged %d; memories expected %d, found %d; 503 answers %d; transport failures %d; read-your-writes checks %d, failed %d",
		c.acked.Load(), len(c.model["alpha"])+len(c.model["beta"])+len(c.model["gamma"]), found, c.unavailable.Load(), c.transport.Load(), c.ryw.Load(), c.rywFailed.Load())
}

func ptr[T any](v T) *T { return &v }

// writer adds, replaces and deletes memories of its own IDs (so the
// final state does not depend on how writers interleave) on replica w%3,
// updating the model after each acknowledgement.
func writer(t *testing.T, ctx context.Context, c *cluster, w int, namespaces []string, stop chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(w), 7))
	words := []string{"apple", "banana", "cherry", "memory", "river", "stone"}
	var mine [][2]string // (ns, id) this writer believes exist
	next := 0
	text := func(id string, v int) string {
		return fmt.Sprintf("%s %s %s w%d v%d", id, words[rng.IntN(len(words))], words[rng.IntN(len(words))], w, v)
	}
	for op := 0; ; op++ {
		select {
		case <-stop:
			return
		default:
		}
		ns := namespaces[rng.IntN(len(namespaces))]
		switch k := rng.IntN(10); {
		case k < 4 || len(mine) == 0: // add one
			id := fmt.Sprintf("w%d-%d", w, next)
			next++
			tx := text(id, 0)
			c.do(t, ctx, w, func(r *replica) error {
				_, err := r.c.AddMemories(ctx, api.AddMemoriesRequest{Memories: []api.MemoryIn{{Namespace: ns, ID: id, Text: tx}}})
				return err
			})
			c.ack(ns, id, tx)
			mine = append(mine, [2]string{ns, id})
		case k < 6: // a batch of five
			var in []api.MemoryIn
			for range 5 {
				id := fmt.Sprintf("w%d-%d", w, next)
				next++
				in = append(in, api.MemoryIn{Namespace: ns, ID: id, Text: text(id, 0)})
			}
			c.do(t, ctx, w, func(r *replica) error {
				_, err := r.c.AddMemories(ctx, api.AddMemoriesRequest{Memories: in})
				return err
			})
			for _, m := range in {
				c.ack(ns, m.ID, m.Text)
				mine = append(mine, [2]string{ns, m.ID})
			}
		case k < 8: // replace one of mine
			key := mine[rng.IntN(len(mine))]
			tx := text(key[1], op) + " replaced"
			c.do(t, ctx, w, func(r *replica) error {
				_, err := r.c.AddMemories(ctx, api.AddMemoriesRequest{Memories: []api.MemoryIn{{Namespace: key[0], ID: key[1], Text: tx}}})
				return err
			})
			c.ack(key[0], key[1], tx)
		default: // delete one of mine
			i := rng.IntN(len(mine))
			key := mine[i]
			var firstErr error
			uncertain := c.do(t, ctx, w, func(r *replica) error {
				_, err := r.c.DeleteMemory(ctx, key[0], key[1])
				var ce *client.Error
				if errors.As(err, &ce) && ce.Status == 404 {
					firstErr = err
					return nil
				}
				return err
			})
			if firstErr != nil && !uncertain {
				t.Errorf("delete %v: %v, but it was acknowledged and never deleted", key, firstErr)
			}
			c.ack(key[0], key[1], "")
			mine = slices.Delete(mine, i, i+1)
		}
	}
}

// ack records an acknowledged write ("" text: deleted).
func (c *cluster) ack(ns, id, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if text == "" {
		delete(c.model[ns], id)
	} else {
		c.model[ns][id] = text
	}
	c.acked.Add(1)
}

// readYourWrites adds a memory holding a unique word through one replica
// and, once acknowledged, searches for the word on another: the search
// must find it (or answer 503, never a result without it).
func readYourWrites(t *testing.T, ctx context.Context, c *cluster, k int, stop chan struct{}) {
	ns := fmt.Sprintf("ryw%d", k)
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		id := fmt.Sprintf("r%d-%d", k, n)
		word := fmt.Sprintf("zq%dx%dy", k, n)
		c.do(t, ctx, n, func(r *replica) error {
			_, err := r.c.AddMemories(ctx, api.AddMemoriesRequest{Memories: []api.MemoryIn{{Namespace: ns, ID: id, Text: "marker " + word}}})
			return err
		})
		c.do(t, ctx, n+1, func(r *replica) error {
			res, err := r.c.Search(ctx, api.SearchRequest{Namespace: ns, Query: word})
			if err != nil {
				return err
			}
			c.ryw.Add(1)
			if len(res.Results) == 0 || res.Results[0].ID != id {
				c.rywFailed.Add(1)
				t.Errorf("read-your-writes: %s acknowledged, then a search on %s for %q answered %d results", id, r.base, word, len(res.Results))
			}
			return nil
		})
	}
}

// listAll lists a namespace on r, page by page: id → text.
func listAll(t *testing.T, ctx context.Context, r *replica, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	after := ""
	for {
		page, err := r.c.ListMemories(ctx, ns, client.ListOptions{Limit: 500, After: after})
		if err != nil {
			t.Fatalf("list %s on %s: %v", ns, r.base, err)
		}
		for _, m := range page.Memories {
			out[m.ID] = m.Text
		}
		if page.Next == "" {
			return out
		}
		after = page.Next
	}
}

func firstDiff(a, b map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if b[k] != a[k] {
			return fmt.Sprintf("%s: %q vs %q", k, a[k], b[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			return fmt.Sprintf("%s missing", k)
		}
	}
	return "none"
}

// TestReplicaStoreDown: a replica started while PostgreSQL is down starts,
// answers /ready 503 saying why and memory requests 503 with Retry-After,
// and becomes ready (and writes) by itself once the database is back.
func TestReplicaStoreDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and a rerankd process")
	}
	srv := pgtest.Start(t)
	dbURL := srv.NewDB(t)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	r := startReplica(t, dbURL)
	ctx := context.Background()
	var ce *client.Error
	if err := r.c.Ready(ctx); !errors.As(err, &ce) || ce.Status != 503 || !regexp.MustCompile(`(?i)unavailable|refused|connect`).MatchString(ce.Message) {
		t.Fatalf("ready with the database down: %v", err)
	}
	_, err := r.c.AddMemories(ctx, api.AddMemoriesRequest{Memories: []api.MemoryIn{{Namespace: "n", ID: "a", Text: "kept"}}})
	if !errors.As(err, &ce) || ce.Status != 503 || ce.Type != "store_unavailable" || ce.RetryAfter <= 0 {
		t.Fatalf("add with the database down: %v", err)
	}
	if regexp.MustCompile(regexp.QuoteMeta(srv.Password())).MatchString(r.stderr.String() + ce.Message) {
		t.Fatal("the database password reached a log or an answer")
	}
	if err := srv.StartAgain(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for r.c.Ready(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not ready 15 s after the database came back: %v", r.c.Ready(ctx))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := r.c.AddMemories(ctx, api.AddMemoriesRequest{Memories: []api.MemoryIn{{Namespace: "n", ID: "a", Text: "kept"}}}); err != nil {
		t.Fatal(err)
	}
	res, err := r.c.Search(ctx, api.SearchRequest{Namespace: "n", Query: "kept"})
	if err != nil || len(res.Results) != 1 {
		t.Fatalf("search after recovery: %+v %v", res, err)
	}
	info, err := r.c.Info(ctx)
	if err != nil || info.Memory == nil || !info.Memory.Shared || info.Memory.CatchUpS != 5 || info.Memory.ResidentNamespaces != 1 || info.Memory.IndexBytes <= 0 {
		t.Fatalf("/info memory: %+v %v", info.Memory, err)
	}
	resp, err := http.Get(r.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	for _, want := range []string{"rerankd_memory_namespaces_resident 1", "rerankd_memory_index_builds_total 1", "rerankd_memory_indexed 1"} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
