package storetest

import (
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// The suite's fixtures, for a backend's own tests, so that they build
// memories and compare what they read back as the suite does.

// Mem is a valid memory with every field set, its text and source
// derived from ns and id.
func Mem(ns, id string) memory.Memory { return mem(ns, id) }

// Vec is a deterministic vector of dimension dim; different seeds give
// different vectors.
func Vec(seed, dim int) []float32 { return vec(seed, dim) }

// EqualMem fails t unless got is want (normalised) field by field, Time
// to the nanosecond with its UTC offset.
func EqualMem(t testing.TB, got, want memory.Memory) {
	t.Helper()
	equalMem(t, got, want)
}

// EqualVec fails t unless got and want hold the same float32s bit for bit
// and are both nil or both not.
func EqualVec(t testing.TB, got, want []float32) {
	t.Helper()
	equalVec(t, got, want)
}
