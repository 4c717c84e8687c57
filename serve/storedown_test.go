package serve

import (
	"bytes"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/store/pgstore"
	"github.com/rerankd/rerankd/scoring"
)

// syncBuf is a log sink safe for the server's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStoreRefused: a shared store whose server refuses the login answers
// memory requests 503 store_unavailable with Retry-After (it was a 500
// "memory store error"); /ready, open to probes, says only that the store
// cannot be used, while /info (behind the keys) and the log give the
// cause; repeated probes log the state once.
func TestStoreRefused(t *testing.T) {
	srv := pgtest.Start(t)
	u, err := url.Parse(srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(srv.User(), "wrong-password-42")
	st, err := pgstore.Open(u.String(), pgstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	rcfg := retrieval.DefaultConfig()
	e, err := retrieval.New(st, nil, rcfg)
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	t.Cleanup(func() { _ = e.Close(); _ = st.Close() })
	var logs syncBuf
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"admin-key-0001"}
	base := start(t, cfg, scoring.NewLexical(lexical.Default()), func(s *Server) {
		s.WithMemory(e)
		s.log = slog.New(slog.NewTextHandler(&logs, nil))
	})
	auth := []string{"Authorization", "Bearer admin-key-0001"}

	r := do(t, "POST", base+"/v1/memories", "application/json", `{"namespace":"a","text":"x"}`, auth...)
	checkError(t, r, 503, KindUnavailable)
	if r.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	for range 5 {
		r = do(t, "GET", base+"/ready", "", "")
		checkError(t, r, 503, KindNotReady)
	}
	for _, secret := range []string{srv.User(), "127.0.0.1", "SQLSTATE", "password", "wrong-password-42"} {
		if bytes.Contains(r.body, []byte(secret)) {
			t.Errorf("/ready tells probes %q: %s", secret, r.body)
		}
	}
	info := do(t, "GET", base+"/info", "", "", auth...)
	if !bytes.Contains(info.body, []byte(`"store_error"`)) || !bytes.Contains(info.body, []byte("28P01")) {
		t.Errorf("/info lacks the cause: %s", info.body)
	}
	if bytes.Contains(info.body, []byte("wrong-password-42")) {
		t.Errorf("/info shows the password: %s", info.body)
	}
	out := logs.String()
	if n := strings.Count(out, "memory store cannot be used"); n != 1 {
		t.Errorf("the store's state logged %d times over 5 probes, want once:\n%s", n, out)
	}
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("an unavailable store logged as an error per request:\n%s", out)
	}
}
