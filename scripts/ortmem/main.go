//go:build ignore

// Command ortmem (go run scripts/ortmem/*.go) measures one ONNX Runtime
// session of an encoder graph outside rerankd: peak and resident memory
// (anonymous vs file-backed) at ready and after runs of random rows, under
// session options rerankd does not expose (loading from bytes, the CPU
// arena, memory patterns, an environment arena), or (-ab) the time ratio of
// two sessions alternating run by run. A lab tool for
// docs/perf/encoders-memory.md; errors panic.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

func status() map[string]string {
	f, _ := os.Open("/proc/self/status")
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		m[k] = strings.TrimSpace(v)
	}
	return m
}

func show(tag string) {
	s := status()
	fmt.Printf("%s: HWM %s RSS %s anon %s file %s\n", tag, s["VmHWM"], s["VmRSS"], s["RssAnon"], s["RssFile"])
}

func main() {
	path := flag.String("model", "", "graph")
	bytesLoad := flag.Bool("bytes", false, "load from bytes")
	direct := flag.Bool("direct", false, "use_ort_model_bytes_directly")
	prepack := flag.Bool("prepack", false, "")
	arena := flag.Bool("arena", true, "")
	mempat := flag.Bool("mempattern", true, "")
	envArena := flag.Int("envarena", -1, "register env allocator with this extend strategy")
	envArenaV2 := flag.String("envarenav2", "", "register env allocator with these k=v,k=v arena settings (CreateArenaCfgV2 keys)")
	types := flag.Bool("types", false, "token_type_ids")
	out := flag.String("out", "logits", "")
	runs := flag.Int("runs", 10, "")
	rows := flag.Int("rows", 3, "")
	minLen := flag.Int("min", 180, "")
	maxLen := flag.Int("max", 240, "")
	extra := flag.String("cfg", "", "k=v,k=v session config entries")
	abModel := flag.String("ab", "", "B model: alternate with it (B: mempattern per -bmempattern, prepack per -bprepack)")
	bMempat := flag.Bool("bmempattern", true, "")
	bPrepack := flag.Bool("bprepack", false, "")
	shrink := flag.Bool("shrink", false, "run config memory.enable_memory_arena_shrinkage=cpu:0 (runcfg.go)")
	minRows := flag.Int("minrows", 0, "rows per run drawn from minrows..rows (0: always rows)")
	spin := flag.Bool("spin", true, "session.intra_op.allow_spinning")
	seed := flag.Uint64("seed", 1, "")
	flag.Parse()
	ort.SetSharedLibraryPath(os.Getenv("ORT_LIB"))
	if err := ort.InitializeEnvironment(); err != nil {
		panic(err)
	}
	show("init")
	if *envArenaV2 != "" {
		*envArena = 0
	}
	if *envArena >= 0 {
		cfg, err := ort.NewArenaCfg(0, *envArena, -1, -1)
		if *envArenaV2 != "" {
			kv := map[string]int{}
			for _, p := range strings.Split(*envArenaV2, ",") {
				k, v, _ := strings.Cut(p, "=")
				var n int
				fmt.Sscan(v, &n)
				kv[k] = n
			}
			cfg, err = ort.NewArenaCfgV2(kv)
		}
		if err != nil {
			panic(err)
		}
		mi, err := ort.GetMemoryInfo()
		if err != nil {
			panic(err)
		}
		if err := ort.CreateAndRegisterAllocator(mi, cfg); err != nil {
			panic(err)
		}
	}
	o, _ := ort.NewSessionOptions()
	o.SetIntraOpNumThreads(2)
	if *spin {
		o.AddSessionConfigEntry("session.intra_op.allow_spinning", "1")
	} else {
		o.AddSessionConfigEntry("session.intra_op.allow_spinning", "0")
	}
	if !*prepack {
		o.AddSessionConfigEntry("session.disable_prepacking", "1")
	}
	if *envArena >= 0 {
		o.AddSessionConfigEntry("session.use_env_allocators", "1")
	}
	if !*mempat {
		o.SetMemPattern(false)
	}
	if !*arena {
		o.SetCpuMemArena(false)
	}
	if *direct {
		o.AddSessionConfigEntry("session.use_ort_model_bytes_directly", "1")
		o.AddSessionConfigEntry("session.use_ort_model_bytes_for_initializers", "1")
	}
	if *extra != "" {
		for _, kv := range strings.Split(*extra, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if err := o.AddSessionConfigEntry(k, v); err != nil {
				panic(err)
			}
		}
	}
	ins := []string{"input_ids", "attention_mask"}
	if *types {
		ins = append(ins, "token_type_ids")
	}
	t0 := time.Now()
	var s *ort.DynamicAdvancedSession
	var err error
	if *bytesLoad {
		data, err := os.ReadFile(*path)
		if err != nil {
			panic(err)
		}
		o.AddSessionConfigEntry("session.model_external_initializers_file_folder_path", filepath.Dir(*path))
		s, err = ort.NewDynamicAdvancedSessionWithONNXData(data, ins, []string{*out}, o)
		if err != nil {
			panic(err)
		}
		show("ready(bytes held)")
		data = nil
	} else {
		s, err = ort.NewDynamicAdvancedSession(*path, ins, []string{*out}, o)
		if err != nil {
			panic(err)
		}
	}
	fmt.Printf("load %.2fs\n", time.Since(t0).Seconds())
	show("ready")
	if *abModel != "" {
		ob, _ := ort.NewSessionOptions()
		ob.SetIntraOpNumThreads(2)
		ob.AddSessionConfigEntry("session.intra_op.allow_spinning", "1")
		if !*bPrepack {
			ob.AddSessionConfigEntry("session.disable_prepacking", "1")
		}
		if !*bMempat {
			ob.SetMemPattern(false)
		}
		sb, err := ort.NewDynamicAdvancedSession(*abModel, ins, []string{*out}, ob)
		if err != nil {
			panic(err)
		}
		abRun(s, sb, *types, *runs, *rows, *minLen, *maxLen)
		return
	}
	rng := rand.New(rand.NewPCG(*seed, 2))
	var total time.Duration
	ro, err := ort.NewRunOptions()
	if err != nil {
		panic(err)
	}
	if *shrink {
		addRunConfig(ro, "memory.enable_memory_arena_shrinkage", "cpu:0")
	}
	for r := 0; r < *runs; r++ {
		n := *rows
		if *minRows > 0 {
			n = *minRows + rng.IntN(*rows-*minRows+1)
		}
		w := *minLen + rng.IntN(*maxLen-*minLen+1)
		ids, mask, tt := make([]int64, n*w), make([]int64, n*w), make([]int64, n*w)
		for i := range ids {
			ids[i], mask[i] = int64(5+rng.IntN(290)), 1
		}
		sh := ort.NewShape(int64(n), int64(w))
		a, _ := ort.NewTensor(sh, ids)
		b, _ := ort.NewTensor(sh, mask)
		vals := []ort.Value{a, b}
		if *types {
			c, _ := ort.NewTensor(sh, tt)
			vals = append(vals, c)
		}
		outs := []ort.Value{nil}
		t := time.Now()
		if err := s.RunWithOptions(vals, outs, ro); err != nil {
			panic(err)
		}
		total += time.Since(t)
		for _, v := range vals {
			v.Destroy()
		}
		outs[0].Destroy()
		if r == 0 {
			show("after1")
		}
	}
	fmt.Printf("runs %d: %.3fs per run\n", *runs, total.Seconds()/float64(*runs))
	show("end")
}
