package main

import (
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// The store commands' --json reports. The store package carries no wire
// names (its types are Go values), so the snake_case fields scripts read
// are declared here, beside the commands that print them.

// checkJSON is a store check's totals.
type checkJSON struct {
	Namespaces int `json:"namespaces"`
	Memories   int `json:"memories"`
	Vectors    int `json:"vectors"`
	Problems   int `json:"problems"`
}

func checkView(c store.CheckStats) checkJSON {
	return checkJSON{Namespaces: c.Namespaces, Memories: c.Memories, Vectors: c.Vectors, Problems: c.Problems}
}

// salvageJSON is what a salvage kept and left behind.
type salvageJSON struct {
	Copied  int `json:"copied"`
	Vectors int `json:"vectors"`
	Skipped int `json:"skipped"`
	// FromPages of the copied were read from pages bbolt could not reach.
	FromPages int `json:"from_pages"`
}

func salvageView(s bolt.SalvageStats) salvageJSON {
	return salvageJSON{Copied: s.Copied, Vectors: s.Vectors, Skipped: s.Skipped, FromPages: s.FromPages}
}
