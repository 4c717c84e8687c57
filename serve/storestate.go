package serve

import (
	"log/slog"
	"sync"
	"time"

	"github.com/rerankd/rerankd/retrieval"
)

// storeState remembers whether the shared store was usable at the last
// look (a /ready probe), so that a change is logged once, with its cause,
// rather than at every probe while the database is down.
type storeState struct {
	mu    sync.Mutex
	down  bool
	cause string
}

func (st *storeState) observe(log *slog.Logger, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case err != nil:
		cause := retrieval.Describe(err)
		if !st.down || st.cause != cause {
			log.Warn("memory store cannot be used", "cause", cause)
		}
		st.down, st.cause = true, cause
	case st.down:
		log.Info("memory store usable again")
		st.down, st.cause = false, ""
	}
}

// logLimiter lets one log line through per interval and counts the rest,
// for failures that repeat on every request while a condition lasts (the
// store unavailable, the server not ready): the first says what, the next
// ones how many were not logged.
type logLimiter struct {
	mu         sync.Mutex
	every      time.Duration
	last       time.Time
	suppressed int
}

// allow reports whether to log now, and how many lines were dropped since
// the last one logged.
func (l *logLimiter) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < l.every {
		l.suppressed++
		return false, 0
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return true, n
}
