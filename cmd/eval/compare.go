package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/cmd/internal/cli"
)

// compareKeys are `eval compare`'s metrics, by cut-off.
var compareKeys = []string{"MAP", "MRR", "Recall@5", "NDCG@10", "Recall@10", "Recall@20"}

// compareAlpha marks a difference whose randomization p is below it.
const compareAlpha = 0.05

// compareRun is one run of a comparison.
type compareRun struct {
	Path string   `json:"path"`
	Info *runInfo `json:"run,omitempty"`
	// Sets maps "all" and each LoCoMo category to the run's means.
	Sets map[string]map[string]float64 `json:"sets"`
	// Tests are the paired tests against the first run (none for it).
	Tests []pairedTest `json:"tests,omitempty"`
	// BeyondDepth lists metrics past the documents the run holds.
	BeyondDepth []string `json:"beyond_depth,omitempty"`

	per map[string][]metrics.PerQuery // set → per-query scores, qid order
}

// pairedTest is one metric's test of a run against the first, on one set.
type pairedTest struct {
	Set    string  `json:"set"`
	Metric string  `json:"metric"`
	Diff   float64 `json:"diff"`
	// PRand is the paired randomization test's p, PT the paired t-test's;
	// both absent (null) for a set of fewer than two questions.
	PRand *float64 `json:"p_randomization"`
	PT    *float64 `json:"p_t"`
}

// compareResult is `eval compare --json`'s output.
type compareResult struct {
	Qrels        string       `json:"qrels"`
	Sets         []string     `json:"sets"`
	Metrics      []string     `json:"metrics"`
	Permutations int          `json:"permutations"`
	Seed         uint64       `json:"seed"`
	Runs         []compareRun `json:"runs"`
}

// runCompare implements `eval compare RUN...`.
func runCompare(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: eval compare [flags] RUN RUN...\n\nCompares TREC runs from `eval locomo --run` (their FILE.json sidecars name the data) on the same questions:\nMAP, MRR, NDCG@10 and Recall@k per run and per LoCoMo category, each later run tested against the first per query.")
		fs.PrintDefaults()
	}
	data := fs.String("data", "", "LoCoMo data the runs were made on (default: the first run's sidecar's)")
	unitName := fs.String("unit", "", "retrieval unit (default: the first run's sidecar's)")
	qrelsPath := fs.String("qrels", "", "TREC qrels instead of LoCoMo data (no categories)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	png := fs.String("png", "", "also draw a bar chart of the overall metrics to this PNG file")
	perms := fs.Int("permutations", 10000, "randomization test: random sign patterns per test")
	seed := fs.Uint64("seed", 1, "randomization test: random seed (the same seed, the same p)")
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	paths := fs.Args()
	switch {
	case len(paths) < 2:
		return cli.Usagef("want at least two run files")
	case *perms < 1:
		return cli.Usagef("--permutations must be >= 1")
	case *qrelsPath != "" && *data != "":
		return cli.Usagef("--qrels and --data: give one")
	}
	runs := make([]compareRun, len(paths))
	loaded := make([]metrics.Run, len(paths))
	for i, p := range paths {
		r, err := readFile(p, metrics.ReadRun)
		if err != nil {
			return err
		}
		info, ok, err := readSidecar(p)
		if err != nil {
			return err
		}
		runs[i] = compareRun{Path: p, Sets: map[string]map[string]float64{}, per: map[string][]metrics.PerQuery{}}
		if ok {
			runs[i].Info = &info
			runs[i].BeyondDepth = beyondDepth(info.Deepest)
		}
		loaded[i] = r
	}
	sets, qrelsName, err := compareSets(runs, *data, *unitName, *qrelsPath)
	if err != nil {
		return err
	}
	res := compareResult{Qrels: qrelsName, Metrics: compareKeys, Permutations: *perms, Seed: *seed}
	for _, s := range sets {
		res.Sets = append(res.Sets, s.name)
		for i := range runs {
			sum, per, err := metrics.Evaluate(s.qrels, loaded[i])
			if err != nil {
				return fmt.Errorf("%s: %w", runs[i].Path, err)
			}
			runs[i].Sets[s.name] = summaryMap(sum)
			runs[i].per[s.name] = per
		}
		for i := 1; i < len(runs); i++ {
			for _, k := range compareKeys {
				a, b := perQuery(runs[0].per[s.name], k), perQuery(runs[i].per[s.name], k)
				t := pairedTest{Set: s.name, Metric: k, Diff: runs[i].Sets[s.name][k] - runs[0].Sets[s.name][k]}
				if len(a) >= 2 {
					pr, err := metrics.Randomization(a, b, *perms, *seed)
					if err != nil {
						return err
					}
					_, pt, err := metrics.PairedT(a, b)
					if err != nil {
						return err
					}
					t.PRand, t.PT = &pr, &pt
				}
				runs[i].Tests = append(runs[i].Tests, t)
			}
		}
	}
	res.Runs = runs
	if *png != "" {
		if err := compareChart(res, *png); err != nil {
			return fmt.Errorf("--png %s: %w", *png, err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(res)
	}
	printCompare(stdout, res)
	return nil
}

// evalSet is a set of questions a comparison reports: all, or a category.
type evalSet struct {
	name  string
	qrels metrics.Qrels
}

// compareSets reads the judgments: --qrels, or the LoCoMo data (--data,
// else the first sidecar's), split by category. Runs whose sidecars name
// other data files or another unit are refused: their numbers are not
// comparable.
func compareSets(runs []compareRun, data, unitName, qrelsPath string) ([]evalSet, string, error) {
	if qrelsPath != "" {
		q, err := readFile(qrelsPath, metrics.ReadQrels)
		if err != nil {
			return nil, "", err
		}
		return []evalSet{{"all", q}}, qrelsPath, nil
	}
	first := runs[0].Info
	for _, r := range runs[1:] {
		if first == nil || r.Info == nil {
			break
		}
		if !slices.Equal(r.Info.Data.Files, first.Data.Files) || r.Info.Unit != first.Unit {
			return nil, "", fmt.Errorf("%s and %s were made on different data or units (%s, %s): not comparable",
				runs[0].Path, r.Path, first.Unit, r.Info.Unit)
		}
	}
	if data == "" {
		if first == nil {
			return nil, "", cli.Usagef("%s has no sidecar (%s): give --data or --qrels", runs[0].Path, sidecarPath(runs[0].Path))
		}
		data = first.Data.Path
	}
	if unitName == "" {
		unitName = "turn"
		if first != nil {
			unitName = first.Unit
		}
	}
	unit, err := locomo.ParseUnit(unitName)
	if err != nil {
		return nil, "", cli.Usagef("%v", err)
	}
	ds, err := locomo.Load(data)
	if err != nil {
		return nil, "", err
	}
	qrels := metrics.Qrels(ds.Qrels(unit))
	sets := []evalSet{{"all", qrels}}
	for _, c := range locomo.Categories() {
		sub := metrics.Qrels{}
		for i := range ds.Conversations {
			for _, q := range ds.Conversations[i].Questions {
				if rel, ok := qrels[q.ID]; ok && q.Category == c {
					sub[q.ID] = rel
				}
			}
		}
		if len(sub) > 0 {
			sets = append(sets, evalSet{c.String(), sub})
		}
	}
	return sets, fmt.Sprintf("%s, unit %s", data, unit), nil
}

// summaryMap is a Summary as metric key → value.
func summaryMap(s metrics.Summary) map[string]float64 {
	out := map[string]float64{metrics.QueriesKey: float64(s.Queries)}
	for i, k := range metrics.MetricNames() {
		out[k] = s.Values()[i]
	}
	return out
}

// perQuery is one metric's per-query values (Evaluate's qid order).
func perQuery(per []metrics.PerQuery, key string) []float64 {
	i := slices.Index(metrics.MetricNames(), key)
	out := make([]float64, len(per))
	for j, q := range per {
		out[j] = q.Values()[i]
	}
	return out
}

// label is a run's name in tables and the chart: its file name.
func (r compareRun) label() string { return filepath.Base(r.Path) }

func printCompare(w io.Writer, res compareResult) {
	fmt.Fprintf(w, "judgments: %s\n\nruns:\n", res.Qrels)
	for i, r := range res.Runs {
		desc := "(no sidecar)"
		if in := r.Info; in != nil {
			desc = fmt.Sprintf("%s, depth %d", in.Pipeline, in.Deepest)
			if in.Reranker != nil {
				desc += ", reranker " + in.Reranker.String()
			}
			if in.Embedder != nil {
				desc += ", embedder " + in.Embedder.String()
			}
		}
		fmt.Fprintf(w, "  %c. %s: %s\n", 'A'+i, r.label(), desc)
	}
	fmt.Fprintf(w, "\nEach later run against A, per query: the difference, and the paired randomization test's p (%d sign patterns, seed %d; t-test p in --json); \"†\" marks p < %.2f. \"*\" marks a cut-off past the run's depth.\n",
		res.Permutations, res.Seed, compareAlpha)
	for _, set := range res.Sets {
		n := int(res.Runs[0].Sets[set][metrics.QueriesKey])
		plural := "s"
		if n == 1 {
			plural = "" // and no test: "p n/a"
		}
		fmt.Fprintf(w, "\n%s (%d question%s)\n\n| run |", set, n, plural)
		for _, k := range res.Metrics {
			fmt.Fprintf(w, " %s |", k)
		}
		fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(res.Metrics)))
		for i, r := range res.Runs {
			fmt.Fprintf(w, "| %c |", 'A'+i)
			for _, k := range res.Metrics {
				mark := ""
				if slices.Contains(r.BeyondDepth, k) {
					mark = "*"
				}
				cell := fmt.Sprintf("%.4f%s", r.Sets[set][k], mark)
				for _, t := range r.Tests {
					if t.Set == set && t.Metric == k {
						switch {
						case t.PRand == nil:
							cell += fmt.Sprintf(" (%+.4f, p n/a)", t.Diff)
						case *t.PRand < compareAlpha:
							cell += fmt.Sprintf(" (%+.4f, p %.3f†)", t.Diff, *t.PRand)
						default:
							cell += fmt.Sprintf(" (%+.4f, p %.3f)", t.Diff, *t.PRand)
						}
					}
				}
				fmt.Fprintf(w, " %s |", cell)
			}
			fmt.Fprintln(w)
		}
	}
}

// compareChart draws the overall metrics as grouped bars, one colour per
// run.
func compareChart(res compareResult, path string) error {
	p := plot.New()
	p.Title.Text = "eval compare, all questions"
	p.Y.Label.Text = "mean over questions"
	p.Y.Min, p.Y.Max = 0, 1.25 // room for the legend above the bars
	w := vg.Points(14)
	palette := []color.Color{
		color.NRGBA{R: 31, G: 119, B: 180, A: 255}, color.NRGBA{R: 255, G: 127, B: 14, A: 255},
		color.NRGBA{R: 44, G: 160, B: 44, A: 255}, color.NRGBA{R: 214, G: 39, B: 40, A: 255},
		color.NRGBA{R: 148, G: 103, B: 189, A: 255}, color.NRGBA{R: 140, G: 86, B: 75, A: 255},
	}
	n := len(res.Runs)
	for i, r := range res.Runs {
		vals := make(plotter.Values, len(res.Metrics))
		for j, k := range res.Metrics {
			vals[j] = r.Sets["all"][k]
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bars.Color = palette[i%len(palette)]
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(bars)
		p.Legend.Add(fmt.Sprintf("%c. %s", 'A'+i, r.label()), bars)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.NominalX(res.Metrics...)
	width := vg.Length(max(6, float64(len(res.Metrics))*float64(n)*0.3)) * vg.Inch
	return p.Save(width, 4*vg.Inch, path)
}
