package serve

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/scheduler"
)

// TestOneEngineCallPerRequest: a request of 20 documents of 10 to 150
// words, within the batch budget, is scored by one engine call: the
// scheduler budgets by the shared-prefix engine's cost (packed rows, the
// prefix once) rather than splitting the pairs by length as if the engine
// padded them. /metrics reports the calls per request.
func TestOneEngineCallPerRequest(t *testing.T) {
	metrics := NewMetrics()
	b, scorer := neuralBackend(t, scheduler.DefaultConfig(), metrics)
	if _, ok := scorer.Engine().(*model.PrefixSession); !ok {
		t.Fatalf("engine %T, want the shared-prefix engine the server runs by default", scorer.Engine())
	}
	base := startWithMetrics(t, DefaultConfig(), b, metrics)
	docs := make([]string, 20)
	for i := range docs {
		docs[i] = strings.TrimSpace(strings.Repeat(fmt.Sprintf("memory%d word ", i), (10+i*140/19)/2))
	}
	body := fmt.Sprintf(`{"query":"what happened?","documents":[%s]}`, quoteAll(docs))
	if r := postJSON(t, base+"/rerank", body); r.code != 200 {
		t.Fatalf("rerank: %d %s", r.code, r.body)
	}
	m := do(t, "GET", base+"/metrics", "", "")
	sum := regexp.MustCompile(`(?m)^rerankd_request_engine_calls_sum (\S+)$`).FindSubmatch(m.body)
	count := regexp.MustCompile(`(?m)^rerankd_request_engine_calls_count (\S+)$`).FindSubmatch(m.body)
	if sum == nil || count == nil || string(sum[1]) != "1" || string(count[1]) != "1" {
		t.Fatalf("engine calls per request: sum %q count %q, want 1 call for 1 request\n%s", sum, count, m.body)
	}
	if !strings.Contains(string(m.body), `rerankd_batch_tokens_count{kind="computed"} 1`) {
		t.Error("/metrics does not report the call's computed tokens")
	}
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ",")
}
