package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/post"
)

// runInfo describes a run: what made it, so that two runs can be told
// apart and one repeated. `eval locomo --run FILE` writes it beside the
// run as FILE.json, prints it above the summary and puts it in --json's
// output as "run".
type runInfo struct {
	// Rerankd is the build: module version and VCS revision.
	Rerankd  string `json:"rerankd"`
	Pipeline string `json:"pipeline"`
	Unit     string `json:"unit"`
	// Depth is the documents kept per question (--depth); with a rerank
	// stage the run holds only the RerankDepth reranked ones, so a
	// metric's cut-off past min(Depth, RerankDepth) (Deepest) counts no
	// more than that: see BeyondDepth.
	Depth        int `json:"depth"`
	RerankDepth  int `json:"rerank_depth,omitempty"`
	Deepest      int `json:"deepest"`
	MaxDocTokens int `json:"max_doc_tokens,omitempty"`
	// Reranker and Embedder are the model folders (content hash) or the
	// served APIs (URL, model name sent).
	Reranker *stageInfo          `json:"reranker,omitempty"`
	Embedder *stageInfo          `json:"embedder,omitempty"`
	Ranking  lexrank.Ranking     `json:"ranking"`
	Fusion   *post.FusionConfig  `json:"fusion,omitempty"`
	Recency  *post.RecencyConfig `json:"recency,omitempty"`
	MMR      *post.MMRConfig     `json:"mmr,omitempty"`
	Data     dataInfo            `json:"data"`
}

// dataInfo names the data files and their hashes.
type dataInfo struct {
	Path  string     `json:"path"`
	Files []fileHash `json:"files"`
}

type fileHash struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// describe builds the job's runInfo; m are its opened models.
func (j locomoJob) describe(m models) (runInfo, error) {
	p, o := j.spec, j.po
	info := runInfo{Rerankd: buildVersion(), Pipeline: pipelineName(p), Unit: j.unit.String(), Depth: o.depth,
		Deepest: o.depth, Reranker: m.reranker, Embedder: m.embedderInfo, Ranking: o.ranking}
	if p.rerank {
		info.RerankDepth, info.Deepest = o.rerankDepth, min(o.depth, o.rerankDepth)
		info.MaxDocTokens = rerank.DefaultMaxDocTokens
	}
	if p.base == "hybrid" {
		f := o.fusion
		info.Fusion = &f
	}
	if p.recency {
		r := o.recency
		info.Recency = &r
	}
	if p.mmr {
		mm := o.mmr
		info.MMR = &mm
	}
	var err error
	info.Data, err = hashData(j.data)
	return info, err
}

// hashData hashes the data: a file, or a folder's .json files (what
// locomo.Load reads).
func hashData(path string) (dataInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	d := dataInfo{Path: abs}
	files := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "*.json"))
		if err != nil {
			return d, err
		}
		slices.Sort(files)
	}
	for _, f := range files {
		h := sha256.New()
		r, err := os.Open(f)
		if err != nil {
			return d, err
		}
		_, err = io.Copy(h, r)
		_ = r.Close()
		if err != nil {
			return d, fmt.Errorf("hashing %s: %w", f, err)
		}
		d.Files = append(d.Files, fileHash{Name: filepath.Base(f), SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	return d, nil
}

// buildVersion is the module version and VCS revision of this binary
// ("(devel)" from a plain go build or test; "+dirty" when the tree had
// changes).
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " " + rev[:min(12, len(rev))] + dirty
	}
	return v
}

// sidecarPath is where a run's description goes.
func sidecarPath(run string) string { return run + ".json" }

func writeSidecar(run string, info runInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(sidecarPath(run), append(b, '\n'), 0o644)
}

// readSidecar reads a run's description (ok false when it has none).
func readSidecar(run string) (runInfo, bool, error) {
	b, err := os.ReadFile(sidecarPath(run))
	if os.IsNotExist(err) {
		return runInfo{}, false, nil
	}
	if err != nil {
		return runInfo{}, false, err
	}
	var info runInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return runInfo{}, false, fmt.Errorf("%s: %w", sidecarPath(run), err)
	}
	return info, true, nil
}

// randomWarnings says, per stage whose model has random weights, that the
// run's figures measure nothing.
func (info runInfo) randomWarnings() []string {
	var out []string
	for _, s := range []struct {
		name string
		st   *stageInfo
	}{{"reranker", info.Reranker}, {"embedder", info.Embedder}} {
		if s.st != nil && s.st.RandomWeights {
			out = append(out, fmt.Sprintf("the %s %s: %s", s.name, s.st.Folder, folder.RandomWeightsWarning))
		}
	}
	return out
}

// printRunInfo writes the description's lines above a summary.
func printRunInfo(w io.Writer, info runInfo) {
	fmt.Fprintf(w, "pipeline %s, unit %s, depth %d", info.Pipeline, info.Unit, info.Depth)
	if info.RerankDepth > 0 {
		fmt.Fprintf(w, ", rerank depth %d", info.RerankDepth)
	}
	fmt.Fprintf(w, "\nreranker %s\nembedder %s\n", info.Reranker, info.Embedder)
	for _, warn := range info.randomWarnings() {
		fmt.Fprintf(w, "WARNING: %s\n", warn)
	}
	var files []string
	for _, f := range info.Data.Files {
		files = append(files, fmt.Sprintf("%s (sha256 %.12s)", f.Name, f.SHA256))
	}
	fmt.Fprintf(w, "data %s: %s\nrerankd %s\n", info.Data.Path, strings.Join(files, ", "), info.Rerankd)
}

// cutoff is a metric key's rank cut-off (0 for MAP and MRR, which have
// none).
func cutoff(key string) int {
	_, k, ok := strings.Cut(key, "@")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(k)
	return n
}

// tableKeys are the locomo table's metric columns: MAP and MRR, then by
// cut-off (Recall@1, NDCG@5, P@5, Recall@5, NDCG@10, ...), Recall@100 last
// of the metrics, then queries.
func tableKeys() []string {
	keys := append(metrics.MetricNames(), recall100Key)
	slices.SortStableFunc(keys, func(a, b string) int { return cutoff(a) - cutoff(b) })
	return append(keys, metrics.QueriesKey)
}

const recall100Key = "Recall@100"

// beyondDepth lists the metric keys whose cut-off is past deepest: the run
// holds at most deepest documents per question, so they equal the metric
// at deepest.
func beyondDepth(deepest int) []string {
	var out []string
	for _, k := range tableKeys() {
		if cutoff(k) > deepest {
			out = append(out, k)
		}
	}
	return out
}
