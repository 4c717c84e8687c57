//go:build ignore

package main

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// abRun alternates runs between two sessions and prints the median ratio b/a.
func abRun(a, b *ort.DynamicAdvancedSession, types bool, runs, rows, minLen, maxLen int) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ratios []float64
	var ta, tb time.Duration
	one := func(s *ort.DynamicAdvancedSession, vals []ort.Value) time.Duration {
		outs := []ort.Value{nil}
		t := time.Now()
		if err := s.Run(vals, outs); err != nil {
			panic(err)
		}
		d := time.Since(t)
		outs[0].Destroy()
		return d
	}
	for r := 0; r < runs; r++ {
		w := minLen + rng.IntN(maxLen-minLen+1)
		ids, mask, tt := make([]int64, rows*w), make([]int64, rows*w), make([]int64, rows*w)
		for i := range ids {
			ids[i], mask[i] = int64(5+rng.IntN(290)), 1
		}
		sh := ort.NewShape(int64(rows), int64(w))
		x, _ := ort.NewTensor(sh, ids)
		y, _ := ort.NewTensor(sh, mask)
		vals := []ort.Value{x, y}
		if types {
			z, _ := ort.NewTensor(sh, tt)
			vals = append(vals, z)
		}
		var da, db time.Duration
		if r%2 == 0 {
			da = one(a, vals)
			db = one(b, vals)
		} else {
			db = one(b, vals)
			da = one(a, vals)
		}
		ta, tb = ta+da, tb+db
		ratios = append(ratios, db.Seconds()/da.Seconds())
		for _, v := range vals {
			v.Destroy()
		}
	}
	sort.Float64s(ratios)
	fmt.Printf("A/B: B over A time: total %.3f, median %.3f (%d runs)\n", tb.Seconds()/ta.Seconds(), ratios[len(ratios)/2], runs)
}
