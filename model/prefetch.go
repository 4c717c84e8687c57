package model

import (
	"log/slog"
	"os"

	"github.com/rerankd/rerankd/internal/pagecache"
	"github.com/rerankd/rerankd/model/onnx"
)

// prefetchGraph asks the kernel to read the external data the graph at
// path will map, in large requests, while ONNX Runtime builds the
// session. On a first start (the files not in the page cache) a session
// otherwise reads its weights one page fault at a time, interleaved with
// prepacking; the reads started here overlap that work. Embedding tables
// (read only by Gather) are left out: a run touches a few of their rows.
// With tail set, the bytes after the last initializer are read too: where
// a session-cache entry keeps its prepacked weights, which no initializer
// names. Errors cost only the hint and are logged at debug level.
func prefetchGraph(path string, tail bool) {
	ranges, err := onnx.ExternalRanges(path)
	if err != nil {
		slog.Debug("prefetch: graph unreadable", "path", path, "err", err)
		return
	}
	byFile := map[string][]pagecache.Range{}
	ends := map[string]int64{}
	var order []string
	for _, r := range ranges {
		if _, ok := ends[r.File]; !ok {
			order = append(order, r.File)
		}
		ends[r.File] = max(ends[r.File], r.Offset+r.Len)
		if !r.GatherOnly {
			byFile[r.File] = append(byFile[r.File], pagecache.Range{Off: r.Offset, Len: r.Len})
		}
	}
	for _, f := range order {
		rs := byFile[f]
		if tail {
			if st, err := os.Stat(f); err == nil && st.Size() > ends[f] {
				rs = append(rs, pagecache.Range{Off: ends[f], Len: st.Size() - ends[f]})
			}
		}
		if len(rs) == 0 {
			continue
		}
		if err := pagecache.Prefetch(f, rs...); err != nil {
			slog.Debug("prefetch failed", "file", f, "err", err)
		}
	}
}
