//go:build gse

package app

// Built with -tags gse, rerankd links the gse word segmenter, so that
// `serve --analyzer gse` (and gse+bigram, gse+unigram) can index Chinese
// memories by dictionary words. It is a build tag because linking gse
// adds about 33 MB to the binary (see lexical/segmenter.go); the
// dictionary itself is loaded only when such a mode is chosen.
import _ "github.com/rerankd/rerankd/lexical/gse"

func init() { gseLinked = true }
