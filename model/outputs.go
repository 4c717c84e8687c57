package model

import (
	"fmt"
)

// OutputKind says how a model's output holds the relevance logit.
type OutputKind int

// The output layouts rerankd understands (see the package doc).
const (
	// OutputLogit is our contract: [batch], yes minus no at the last real token.
	OutputLogit OutputKind = iota + 1
	// OutputYesNo is [batch, 2] holding (no, yes) logits.
	OutputYesNo
	// OutputVocabLast is [batch, vocab] full logits at the last real token.
	OutputVocabLast
	// OutputVocabAll is [batch, seq, vocab] full logits at every position.
	OutputVocabAll
	// outputRank2 is [batch, ?] with a dynamic second dimension: yes/no or
	// vocabulary, decided from the size the first run returns.
	outputRank2
)

func (k OutputKind) String() string {
	switch k {
	case OutputLogit:
		return "logit [batch]"
	case OutputYesNo:
		return "yes/no [batch,2]"
	case OutputVocabLast:
		return "vocabulary at last token [batch,vocab]"
	case OutputVocabAll:
		return "vocabulary at every token [batch,seq,vocab]"
	case outputRank2:
		return "[batch,?] (decided at run time)"
	}
	return "unknown"
}

// detectOutput classifies an output from its declared dimensions (-1 for a
// dynamic one).
func detectOutput(name string, dims []int64, yesID, noID int) (OutputKind, error) {
	switch len(dims) {
	case 1:
		return OutputLogit, nil
	case 2:
		switch d := dims[1]; {
		case d == 2:
			return OutputYesNo, nil
		case d < 0:
			return outputRank2, nil
		case d > int64(max(yesID, noID)):
			return OutputVocabLast, nil
		}
	case 3:
		if d := dims[2]; d < 0 || d > int64(max(yesID, noID)) {
			return OutputVocabAll, nil
		}
	}
	return 0, fmt.Errorf("output %q has shape %v: want [batch] (logit), [batch,2] (no,yes), "+
		"[batch,vocab] or [batch,seq,vocab] with vocab > the yes/no ids %d/%d", name, dims, yesID, noID)
}

// extractLogits reads one logit per row from an output of the given kind
// and actual shape. last[b] is row b's last real position.
func extractLogits(kind OutputKind, data []float32, shape []int64, last []int, yesID, noID int) ([]float32, error) {
	batch := len(last)
	if len(shape) == 0 || shape[0] != int64(batch) {
		return nil, fmt.Errorf("output shape %v: want batch %d first", shape, batch)
	}
	if kind == outputRank2 {
		kind = OutputVocabLast
		if len(shape) == 2 && shape[1] == 2 {
			kind = OutputYesNo
		}
	}
	want := map[OutputKind]int{OutputLogit: 1, OutputYesNo: 2, OutputVocabLast: 2, OutputVocabAll: 3}[kind]
	if len(shape) != want {
		return nil, fmt.Errorf("output shape %v does not fit %v", shape, kind)
	}
	size := int64(1)
	for _, d := range shape {
		size *= d
	}
	if size != int64(len(data)) {
		return nil, fmt.Errorf("output shape %v but %d values", shape, len(data))
	}
	out := make([]float32, batch)
	for b := range out {
		switch kind {
		case OutputLogit:
			out[b] = data[b]
		case OutputYesNo:
			out[b] = data[2*b+1] - data[2*b]
		case OutputVocabLast:
			v := int(shape[1])
			if max(yesID, noID) >= v {
				return nil, fmt.Errorf("vocabulary output has %d entries, yes/no ids are %d/%d", v, yesID, noID)
			}
			out[b] = data[b*v+yesID] - data[b*v+noID]
		case OutputVocabAll:
			s, v := int(shape[1]), int(shape[2])
			if max(yesID, noID) >= v || last[b] >= s {
				return nil, fmt.Errorf("output shape %v cannot hold position %d / ids %d,%d", shape, last[b], yesID, noID)
			}
			base := (b*s + last[b]) * v
			out[b] = data[base+yesID] - data[base+noID]
		}
	}
	return out, nil
}
