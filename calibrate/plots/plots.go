// Package plots draws calibration diagnostics as PNG files with
// gonum.org/v1/plot: a reliability diagram, score histograms of relevant
// and non-relevant pairs, and precision/recall/F1 against the threshold.
//
// It is separate from package calibrate so that the server, which loads
// calibration files, does not link a plotting library and its fonts.
//
// Every plot is meant to be of held-out probabilities (calibrate.Evaluation
// Probs): a reliability diagram of the fitting data itself mostly shows
// that the fit fitted.
package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/rerankd/rerankd/calibrate"
)

// Data is what the plots show.
type Data struct {
	// Title names the data and method, e.g. "bm25 on LoCoMo dev, platt".
	Title string
	// Scores are the pipeline's scores (the calibration's input scale),
	// Probs the held-out calibrated probabilities, Labels the judgments;
	// all three are parallel.
	Scores []float64
	Probs  []float64
	Labels []bool
	// ScoresAreProbabilities adds the uncalibrated scores to the
	// reliability diagram, for comparison.
	ScoresAreProbabilities bool
	// Bins is the number of equal-width reliability bins.
	Bins int
	// Threshold (on probabilities) and the Rule that chose it are marked on
	// the threshold plot.
	Threshold float64
	Rule      string
}

// Files are the names WriteAll writes, in its output folder.
var Files = []string{"reliability.png", "histograms.png", "thresholds.png"}

var (
	// NRGBA, not RGBA: the histograms lower alpha, and RGBA is
	// premultiplied.
	blue   = color.NRGBA{R: 31, G: 119, B: 180, A: 255}
	orange = color.NRGBA{R: 255, G: 127, B: 14, A: 255}
	green  = color.NRGBA{R: 44, G: 160, B: 44, A: 255}
	grey   = color.NRGBA{R: 128, G: 128, B: 128, A: 255}
	red    = color.NRGBA{R: 214, G: 39, B: 40, A: 255}
)

const width, height = 7 * vg.Inch, 5 * vg.Inch

func (d Data) check() error {
	if len(d.Probs) == 0 || len(d.Probs) != len(d.Labels) || len(d.Scores) != len(d.Labels) {
		return fmt.Errorf("plots: %d scores, %d probabilities, %d labels: want the same number, at least one", len(d.Scores), len(d.Probs), len(d.Labels))
	}
	if d.Bins < 1 {
		return errors.New("plots: bins must be >= 1")
	}
	return nil
}

// WriteAll writes Files into dir and returns their paths.
func WriteAll(d Data, dir string) ([]string, error) {
	var paths []string
	for i, draw := range []func(Data, string) error{Reliability, Histograms, Thresholds} {
		p := filepath.Join(dir, Files[i])
		if err := draw(d, p); err != nil {
			return paths, fmt.Errorf("%s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	return p
}

// Reliability draws observed frequency against mean predicted probability,
// with the diagonal of perfect calibration, in two panels. Left: the
// classic equal-width bins over [0, 1], each calibrated point labelled
// with its pair count, since a bin of ten pairs says little. Right:
// equal-mass bins, zoomed to where the calibrated probabilities are: when
// most pairs are irrelevant, nearly all of them fall into the first
// equal-width bin, and only equal-mass bins show calibration there.
func Reliability(d Data, path string) error {
	if err := d.check(); err != nil {
		return err
	}
	left, err := reliabilityPanel(d, calibrate.EqualWidth)
	if err != nil {
		return err
	}
	right, err := reliabilityPanel(d, calibrate.EqualMass)
	if err != nil {
		return err
	}
	img := vgimg.New(2*width, height)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 4, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	c := plot.Align([][]*plot.Plot{{left, right}}, tiles, draw.New(img))
	left.Draw(c[0][0])
	right.Draw(c[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close() // the write error is the one to report
		return err
	}
	return f.Close()
}

func reliabilityPanel(d Data, binning calibrate.Binning) (*plot.Plot, error) {
	title := fmt.Sprintf("Reliability, held out, %d equal-width bins", d.Bins)
	if binning == calibrate.EqualMass {
		title = fmt.Sprintf("%d equal-mass bins (~%d pairs each), zoomed", d.Bins, len(d.Probs)/d.Bins)
	}
	p := newPlot(title+"\n"+d.Title, "mean predicted probability", "fraction relevant")
	bins := calibrate.ReliabilityBins(d.Probs, d.Labels, d.Bins, binning)
	top := 1.0
	if binning == calibrate.EqualMass {
		top = 0
		for _, b := range bins {
			top = max(top, b.MeanProb, b.FracPos)
		}
		top = min(1, max(top*1.1, 1e-3))
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, top, 0, top
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: top, Y: top}})
	if err != nil {
		return nil, err
	}
	diag.Color, diag.Dashes = grey, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(diag)
	p.Legend.Add("perfect calibration", diag)
	series := func(bins []calibrate.Bin, c color.Color, name string, labelled bool) error {
		xys := make(plotter.XYs, len(bins))
		labels := make([]string, len(bins))
		var ece float64
		for i, b := range bins {
			xys[i] = plotter.XY{X: b.MeanProb, Y: b.FracPos}
			labels[i] = fmt.Sprintf("n=%d", b.Count)
			ece += float64(b.Count) * math.Abs(b.MeanProb-b.FracPos)
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l.Color, s.Color = c, c
		p.Add(l, s)
		p.Legend.Add(fmt.Sprintf("%s (ECE %.4f)", name, ece/float64(len(d.Probs))), l, s)
		if !labelled {
			return nil
		}
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return err
		}
		for i := range lab.TextStyle {
			lab.TextStyle[i].Font.Size = vg.Points(8)
		}
		lab.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(-10)}
		p.Add(lab)
		return nil
	}
	// Raw scores only on the full-range panel: they would stretch the zoom.
	if d.ScoresAreProbabilities && binning == calibrate.EqualWidth {
		if err := series(calibrate.ReliabilityBins(d.Scores, d.Labels, d.Bins, binning), orange, "raw scores", false); err != nil {
			return nil, err
		}
	}
	if err := series(bins, blue, "calibrated", binning == calibrate.EqualWidth); err != nil {
		return nil, err
	}
	return p, nil
}

// Histograms overlays the score distributions of relevant and non-relevant
// pairs on shared bins, each normalised to sum to 1: the classes are very
// unequal in size, and a calibration can only separate what these two
// shapes separate.
func Histograms(d Data, path string) error {
	if err := d.check(); err != nil {
		return err
	}
	const nBins = 40
	lo, hi := slices.Min(d.Scores), slices.Max(d.Scores)
	if d.ScoresAreProbabilities {
		lo, hi = 0, 1
	}
	if !(hi > lo) {
		hi = lo + 1
	}
	w := (hi - lo) / nBins
	p := newPlot("Score distributions: "+d.Title, "score (pipeline output, before calibration)", "fraction of the class per bin")
	p.Legend.Left = false
	for _, cls := range []struct {
		label bool
		name  string
		fill  color.NRGBA
	}{{false, "not relevant", orange}, {true, "relevant", blue}} {
		bins := make([]plotter.HistogramBin, nBins)
		for i := range bins {
			bins[i].Min, bins[i].Max = lo+float64(i)*w, lo+float64(i+1)*w
		}
		n := 0
		for i, s := range d.Scores {
			if d.Labels[i] == cls.label {
				bins[min(max(int((s-lo)/w), 0), nBins-1)].Weight++
				n++
			}
		}
		if n == 0 {
			continue
		}
		for i := range bins {
			bins[i].Weight /= float64(n)
		}
		fill := cls.fill
		fill.A = 110
		h := &plotter.Histogram{Bins: bins, Width: w, FillColor: fill, LineStyle: draw.LineStyle{Width: vg.Points(1), Color: cls.fill}}
		p.Add(h)
		p.Legend.Add(fmt.Sprintf("%s (%d)", cls.name, n), h)
	}
	return p.Save(width, height, path)
}

// Thresholds draws precision, recall, F1 and the fraction kept against the
// threshold on held-out probabilities, with the chosen threshold marked.
func Thresholds(d Data, path string) error {
	if err := d.check(); err != nil {
		return err
	}
	pts := calibrate.Sweep(d.Probs, d.Labels)
	// Tens of thousands of distinct probabilities draw no better than a
	// thousand.
	stride := max(1, len(pts)/1000)
	var prec, rec, f1, kept plotter.XYs
	for i := 0; i < len(pts); i += stride {
		q := pts[i]
		prec = append(prec, plotter.XY{X: q.Threshold, Y: q.Precision})
		rec = append(rec, plotter.XY{X: q.Threshold, Y: q.Recall})
		f1 = append(f1, plotter.XY{X: q.Threshold, Y: q.F1})
		kept = append(kept, plotter.XY{X: q.Threshold, Y: q.Kept})
	}
	p := newPlot("Threshold (held-out probabilities): "+d.Title, "threshold on calibrated probability (keep p >= t)", "")
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.Legend.Left = false
	for _, s := range []struct {
		xys  plotter.XYs
		c    color.Color
		name string
		dash bool
	}{{prec, blue, "precision", false}, {rec, orange, "recall", false}, {f1, green, "F1", false}, {kept, grey, "fraction kept", true}} {
		l, err := plotter.NewLine(s.xys)
		if err != nil {
			return err
		}
		l.Color, l.Width = s.c, vg.Points(1.5)
		if s.dash {
			l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		}
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	if !math.IsNaN(d.Threshold) {
		t := d.Threshold
		mark, err := plotter.NewLine(plotter.XYs{{X: t, Y: 0}, {X: t, Y: 1}})
		if err != nil {
			return err
		}
		mark.Color, mark.Dashes = red, []vg.Length{vg.Points(5), vg.Points(3)}
		at := calibrate.PointAt(d.Probs, d.Labels, t)
		p.Add(mark)
		p.Legend.Add(fmt.Sprintf("chosen %.3f (%s): P %.2f R %.2f", t, d.Rule, at.Precision, at.Recall), mark)
	}
	return p.Save(width, height, path)
}
