package calibrate

import (
	"cmp"
	"math"
	"slices"
)

// Bin is one group of a reliability diagram.
type Bin struct {
	// Lo and Hi bound the bin: its edges for equal-width bins, its
	// smallest and largest probability for equal-mass bins.
	Lo, Hi float64
	Count  int
	// MeanProb is the mean predicted probability, FracPos the observed
	// fraction of relevant pairs.
	MeanProb, FracPos float64
}

// ReliabilityBins groups probabilities (in [0, 1]) into at most n bins and
// returns the non-empty ones in increasing order. Equal-mass bins hold
// about len(probs)/n pairs; a run of equal probabilities is never split, so
// a bin can be larger and there can be fewer than n bins.
func ReliabilityBins(probs []float64, labels []bool, n int, b Binning) []Bin {
	if len(probs) == 0 || n < 1 {
		return nil
	}
	if b == EqualMass {
		return equalMass(probs, labels, n)
	}
	bins := make([]Bin, n)
	for i := range bins {
		bins[i].Lo, bins[i].Hi = float64(i)/float64(n), float64(i+1)/float64(n)
	}
	for i, p := range probs {
		k := min(max(int(p*float64(n)), 0), n-1) // 1.0 belongs to the last bin
		bins[k].add(p, labels[i])
	}
	out := bins[:0]
	for _, bin := range bins {
		if bin.Count > 0 {
			out = append(out, bin.finish())
		}
	}
	return out
}

func equalMass(probs []float64, labels []bool, n int) []Bin {
	idx := make([]int, len(probs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(probs[a], probs[b]) }) // ties share a bin: their order is irrelevant
	var out []Bin
	start := 0
	for k := 1; k <= n && start < len(idx); k++ {
		end := max(len(idx)*k/n, start+1)
		for end < len(idx) && probs[idx[end]] == probs[idx[end-1]] {
			end++ // keep ties together
		}
		bin := Bin{Lo: probs[idx[start]], Hi: probs[idx[end-1]]}
		for _, i := range idx[start:end] {
			bin.add(probs[i], labels[i])
		}
		out = append(out, bin.finish())
		start = end
	}
	return out
}

// add accumulates sums in MeanProb and FracPos; finish turns them into
// means.
func (b *Bin) add(p float64, label bool) {
	b.Count++
	b.MeanProb += p
	if label {
		b.FracPos++
	}
}

func (b Bin) finish() Bin {
	b.MeanProb /= float64(b.Count)
	b.FracPos /= float64(b.Count)
	return b
}

// ECE is the expected calibration error: the count-weighted mean gap
// between predicted and observed frequency over the bins.
func ECE(probs []float64, labels []bool, n int, b Binning) float64 {
	var sum float64
	for _, bin := range ReliabilityBins(probs, labels, n, b) {
		sum += float64(bin.Count) * math.Abs(bin.MeanProb-bin.FracPos)
	}
	if len(probs) == 0 {
		return 0
	}
	return sum / float64(len(probs))
}

// Brier is the mean squared difference between probability and label.
func Brier(probs []float64, labels []bool) float64 {
	if len(probs) == 0 {
		return 0
	}
	var sum float64
	for i, p := range probs {
		y := 0.0
		if labels[i] {
			y = 1
		}
		sum += (p - y) * (p - y)
	}
	return sum / float64(len(probs))
}
