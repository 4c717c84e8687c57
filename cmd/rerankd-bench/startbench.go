package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/client"
	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/internal/pagecache"
	"github.com/rerankd/rerankd/model/onnx"
)

// startBenchResult is the JSON contract of `rerankd-bench start-bench`: for each
// start variant (serve settings) and weights, starts of `rerankd serve`
// with the model's files dropped from the page cache first (first starts)
// and right after one (repeat starts), alternating, each timed to the first
// 200 from /ready and then through two requests.
type startBenchResult struct {
	Model         string  `json:"model"`
	Rounds        int     `json:"rounds"`
	Threads       int     `json:"threads"`
	Candidates    int     `json:"candidates"` // documents per timed request
	WeightFilesMB float64 `json:"weight_files_mb"`
	// Base is the variant the ratios to a base divide by (the first one).
	Base     string         `json:"base"`
	Variants []startVariant `json:"variants"`
	Note     string         `json:"note"`
}

// startVariant is one variant's starts with one kind of weights.
type startVariant struct {
	Variant string   `json:"variant"`
	Quant   string   `json:"quant"`
	Flags   []string `json:"flags"` // the serve flags that make the variant
	// SetupS is the start that wrote the variant's session-cache entry
	// (once per machine and model, not measured as a first start);
	// DiskMB what the entry takes on disk.
	SetupS float64    `json:"setup_s,omitempty"`
	DiskMB float64    `json:"disk_mb,omitempty"`
	First  startStats `json:"first"`
	Repeat startStats `json:"repeat"`
	// FirstOverRepeat is First.ReadyS / Repeat.ReadyS; FirstOverBase and
	// RepeatOverBase are this variant's medians over the base variant's
	// with the same weights.
	FirstOverRepeat float64 `json:"first_over_repeat"`
	FirstOverBase   float64 `json:"first_over_base"`
	RepeatOverBase  float64 `json:"repeat_over_base"`
	// SecondRequestOverBase is the steady request's median over the base
	// variant's: what a variant costs each request once started.
	SecondRequestOverBase float64 `json:"second_request_over_base"`
}

// startStats are medians over a variant's starts of one kind.
type startStats struct {
	ReadyS float64   `json:"ready_s"` // process start to the first 200 from /ready
	Runs   []float64 `json:"ready_runs_s"`
	// FirstRequestS is the first request after ready (a first start may
	// have left reading to it), SecondRequestS the next one (another
	// query, the same documents); ReadyPlusFirstS their sum per start.
	FirstRequestS   float64 `json:"first_request_s"`
	SecondRequestS  float64 `json:"second_request_s"`
	ReadyPlusFirstS float64 `json:"ready_plus_first_request_s"`
	// CPUS is the process's user+system CPU time at ready, ReadMB what it
	// had read from the disk (not the page cache) by then, MajorFaults its
	// page faults that waited for the disk.
	CPUS        float64 `json:"cpu_s"`
	ReadMB      float64 `json:"read_mb"`
	MajorFaults float64 `json:"major_faults"`
	// PeakRSSMB is the largest VmHWM at ready; PeakRSSAfterMB after the
	// two requests.
	PeakRSSMB      float64 `json:"peak_rss_mb"`
	PeakRSSAfterMB float64 `json:"peak_rss_after_requests_mb"`
	// ResidentBefore is the median share of the model's (and the cache
	// entry's) file bytes in the page cache just before the start: ~0 for
	// a first start, ~what the previous start read for a repeat one.
	ResidentBefore float64 `json:"resident_before"`
}

// startSample is one measured start.
type startSample struct {
	ready, first, second, cpu, readMB, majflt, peak, peakAfter, resident float64
}

// startVariantSpec is a named set of serve flags; sessionCache marks the
// ones that need a session-cache entry written before they are measured.
type startVariantSpec struct {
	name         string
	flags        []string
	sessionCache bool
}

// startVariants are the variants start-bench knows, by name. Each but
// default sets every start flag itself, so it means the same whatever
// serve's defaults are.
func startVariants() []startVariantSpec {
	return []startVariantSpec{
		{name: "default"},
		{name: "prepack", flags: []string{"--prepack=true", "--prefetch=false"}},
		{name: "prepack+prefetch", flags: []string{"--prepack=true", "--prefetch=true"}},
		{name: "no-prepack", flags: []string{"--prepack=false", "--prefetch=false"}},
		{name: "no-prepack+prefetch", flags: []string{"--prepack=false", "--prefetch=true"}},
		{name: "session-cache", flags: []string{"--prepack=true", "--prefetch=false"}, sessionCache: true},
		{name: "session-cache+prefetch", flags: []string{"--prepack=true", "--prefetch=true"}, sessionCache: true},
	}
}

func variantNames() []string {
	var names []string
	for _, v := range startVariants() {
		names = append(names, v.name)
	}
	return names
}

func runStartBench(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("start-bench", flag.ContinueOnError)
	dir := fs.String("model", "", "model folder (required)")
	rounds := fs.Int("rounds", 3, "rounds; each starts every variant once with its files dropped from the page cache, then once more right after")
	quants := fs.String("quant", "fp32", "weights to start, comma-separated: fp32 and the quantised variants the folder has (int8, ...)")
	variants := fs.String("variants", "default", "start variants, comma-separated, the first the base of the ratios: "+strings.Join(variantNames(), ", "))
	candidates := fs.Int("candidates", 10, "documents in each of the two requests timed after ready")
	threads := fs.Int("threads", 0, "ONNX Runtime intra-op threads (0: one per core)")
	cacheRoot := fs.String("session-cache-dir", "", "folder for the session-cache variants' entries (default: a temporary folder, removed at the end)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	ortLib := fs.String("ort-lib", defaultORTLib(), "ONNX Runtime shared library (env ORT_LIB)")
	dev := device.Define(fs)
	tok := fs.String("tokenizer", defaultTokenizer(), "tokenizer used when the model folder has none")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	var errs []error
	if *dir == "" {
		errs = append(errs, errors.New("--model is required"))
	} else if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
		errs = append(errs, fmt.Errorf("--model %s: not a folder", *dir))
	}
	if *rounds < 1 {
		errs = append(errs, fmt.Errorf("--rounds %d: want >= 1", *rounds))
	}
	if *candidates < 1 {
		errs = append(errs, fmt.Errorf("--candidates %d: want >= 1", *candidates))
	}
	if *threads < 0 {
		errs = append(errs, fmt.Errorf("--threads %d: want >= 0", *threads))
	}
	var qs []onnx.Quant
	for _, s := range strings.Split(*quants, ",") {
		q, err := onnx.ParseQuant(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, fmt.Errorf("--quant: %w", err))
			continue
		}
		qs = append(qs, q)
	}
	var specs []startVariantSpec
	for _, s := range strings.Split(*variants, ",") {
		i := slices.IndexFunc(startVariants(), func(v startVariantSpec) bool { return v.name == strings.TrimSpace(s) })
		if i < 0 {
			errs = append(errs, fmt.Errorf("--variants: unknown %q (want %s)", s, strings.Join(variantNames(), ", ")))
			continue
		}
		specs = append(specs, startVariants()[i])
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if !pagecache.Supported {
		return errors.New("start-bench: first starts need the page cache dropped, which this system does not support (Linux only)")
	}
	for _, q := range qs {
		if _, err := os.Stat(filepath.Join(*dir, onnx.QuantFile(onnx.ModelFile, q))); err != nil {
			return fmt.Errorf("%w: --quant %v: model folder %s has no %s", errUsage, q, *dir, onnx.QuantFile(onnx.ModelFile, q))
		}
	}
	root := *cacheRoot
	if root == "" {
		tmp, err := os.MkdirTemp("", "rerankd-start-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp) //nolint:errcheck // scratch space
		root = tmp
	}
	exe, err := rerankdExe()
	if err != nil {
		return err
	}
	b := &startBench{dev: dev, exe: exe, dir: *dir, ortLib: dev.ORTLib(*ortLib), tok: *tok, threads: *threads, candidates: *candidates}
	r := startBenchResult{Model: *dir, Rounds: *rounds, Threads: *threads, Candidates: *candidates, Base: specs[0].name,
		WeightFilesMB: float64(weightFileBytes(*dir)) / (1 << 20),
		Note: "first: the model folder's files (and a session-cache entry's) dropped from the page cache before the start; " +
			"repeat: started again right after. Medians over rounds; the two alternate, variants in turn (reversed every other round). " +
			"A first start of a machine with less free memory, or a slower disk, reads more slowly."}
	type cell struct {
		spec          startVariantSpec
		quant         onnx.Quant
		cacheDir      string
		first, repeat []startSample
		setup, diskMB float64
	}
	var cells []*cell
	for _, q := range qs {
		for _, s := range specs {
			c := &cell{spec: s, quant: q}
			if s.sessionCache {
				c.cacheDir = filepath.Join(root, q.String())
			}
			cells = append(cells, c)
		}
	}
	// Entries are written before any start is measured: that start is a
	// one-time cost, reported as setup_s.
	for _, c := range cells {
		if c.cacheDir == "" {
			continue
		}
		if u, err := pagecache.Resident(c.cacheDir); err == nil && u.Files > 0 {
			c.diskMB = float64(u.Bytes) / (1 << 20)
			continue
		}
		fmt.Fprintf(stderr, "writing the %v session-cache entry under %s (once)...\n", c.quant, c.cacheDir)
		s, err := b.start(c.quant, b.flags(c.spec, c.cacheDir), false, c.cacheDir)
		if err != nil {
			return fmt.Errorf("session-cache entry: %w", err)
		}
		c.setup = s.ready
		u, err := pagecache.Resident(c.cacheDir)
		if err != nil {
			return err
		}
		c.diskMB = float64(u.Bytes) / (1 << 20)
	}
	total, done := *rounds*len(cells)*2, 0
	for round := range *rounds {
		order := slices.Clone(cells)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, c := range order {
			for _, first := range []bool{true, false} {
				s, err := b.start(c.quant, b.flags(c.spec, c.cacheDir), first, c.cacheDir)
				if err != nil {
					return fmt.Errorf("%s %v: %w", c.spec.name, c.quant, err)
				}
				done++
				kind := "repeat"
				if first {
					kind, c.first = "first", append(c.first, s)
				} else {
					c.repeat = append(c.repeat, s)
				}
				fmt.Fprintf(stderr, "[%d/%d] %v %s %s start: ready %.2f s, first request %.2f s, read %.0f MB, peak RSS %.0f MB\n",
					done, total, c.quant, c.spec.name, kind, s.ready, s.first, s.readMB, s.peak)
			}
		}
	}
	base := map[onnx.Quant]*startVariant{}
	for _, c := range cells {
		v := startVariant{Variant: c.spec.name, Quant: c.quant.String(), Flags: nonNil(c.spec.flags), SetupS: c.setup, DiskMB: c.diskMB,
			First: summariseStarts(c.first), Repeat: summariseStarts(c.repeat)}
		if c.spec.sessionCache {
			v.Flags = append(slices.Clone(v.Flags), "--session-cache", "DIR")
		}
		v.FirstOverRepeat = ratio(v.First.ReadyS, v.Repeat.ReadyS)
		r.Variants = append(r.Variants, v)
	}
	for i := range r.Variants {
		v := &r.Variants[i]
		q, _ := onnx.ParseQuant(v.Quant)
		if base[q] == nil {
			base[q] = v
		}
		bv := base[q]
		v.FirstOverBase, v.RepeatOverBase = ratio(v.First.ReadyS, bv.First.ReadyS), ratio(v.Repeat.ReadyS, bv.Repeat.ReadyS)
		v.SecondRequestOverBase = ratio(v.Repeat.SecondRequestS, bv.Repeat.SecondRequestS)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return printStartBench(stdout, r)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// weightFileBytes sums the folder's external-data files.
func weightFileBytes(dir string) int64 {
	files, _ := filepath.Glob(filepath.Join(dir, "*.data"))
	var n int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			n += st.Size()
		}
	}
	return n
}

func summariseStarts(ss []startSample) startStats {
	pick := func(f func(startSample) float64) []float64 {
		out := make([]float64, len(ss))
		for i, s := range ss {
			out[i] = f(s)
		}
		return out
	}
	st := startStats{
		Runs:            pick(func(s startSample) float64 { return s.ready }),
		FirstRequestS:   median(pick(func(s startSample) float64 { return s.first })),
		SecondRequestS:  median(pick(func(s startSample) float64 { return s.second })),
		ReadyPlusFirstS: median(pick(func(s startSample) float64 { return s.ready + s.first })),
		CPUS:            median(pick(func(s startSample) float64 { return s.cpu })),
		ReadMB:          median(pick(func(s startSample) float64 { return s.readMB })),
		MajorFaults:     median(pick(func(s startSample) float64 { return s.majflt })),
		PeakRSSMB:       slices.Max(pick(func(s startSample) float64 { return s.peak })),
		PeakRSSAfterMB:  slices.Max(pick(func(s startSample) float64 { return s.peakAfter })),
		ResidentBefore:  median(pick(func(s startSample) float64 { return s.resident })),
	}
	st.ReadyS = median(st.Runs)
	return st
}

func printStartBench(w io.Writer, r startBenchResult) error {
	fmt.Fprintf(w, "%s (weight files %.0f MB), %d rounds, %d documents per request; ratios to %s, same weights, same run\n",
		r.Model, r.WeightFilesMB, r.Rounds, r.Candidates, r.Base)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "weights\tvariant\tstart\tready s\t+1st req s\t1st req s\t2nd req s\tcpu s\tread MB\tpeak RSS MB\tfirst/repeat\tvs base\t")
	for _, v := range r.Variants {
		for _, k := range []struct {
			name string
			st   startStats
			vs   float64
		}{{"first", v.First, v.FirstOverBase}, {"repeat", v.Repeat, v.RepeatOverBase}} {
			fr := ""
			if k.name == "first" {
				fr = fmt.Sprintf("%.2f", v.FirstOverRepeat)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t%s\t%.2f\t\n", v.Quant, v.Variant, k.name, k.st.ReadyS,
				k.st.ReadyPlusFirstS, k.st.FirstRequestS, k.st.SecondRequestS, k.st.CPUS, k.st.ReadMB, k.st.PeakRSSMB, fr, k.vs)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range r.Variants {
		if v.DiskMB > 0 {
			fmt.Fprintf(w, "%v %s: session-cache entry %.0f MB on disk", v.Quant, v.Variant, v.DiskMB)
			if v.SetupS > 0 {
				fmt.Fprintf(w, ", written by a %.1f s start", v.SetupS)
			}
			fmt.Fprintln(w)
		}
		if v.SecondRequestOverBase != 0 && v.SecondRequestOverBase != 1 {
			fmt.Fprintf(w, "%v %s: steady request %.2fx the base's time\n", v.Quant, v.Variant, v.SecondRequestOverBase)
		}
	}
	_, err := fmt.Fprintln(w, r.Note)
	return err
}

// startBench starts `rerankd serve` (this executable; a test binary stands
// in through RERANKD_TEST_AS_CLI) for one model folder.
type startBench struct {
	exe, dir, ortLib, tok string
	dev                   *device.Flags
	threads, candidates   int
}

func (b *startBench) flags(s startVariantSpec, cacheDir string) []string {
	f := slices.Clone(s.flags)
	if cacheDir != "" {
		f = append(f, "--session-cache", cacheDir)
	}
	return f
}

// start runs one start: with first, the model folder and cacheDir are
// dropped from the page cache before it.
func (b *startBench) start(q onnx.Quant, flags []string, first bool, cacheDir string) (startSample, error) {
	paths := []string{b.dir}
	if cacheDir != "" {
		if _, err := os.Stat(cacheDir); err == nil {
			paths = append(paths, cacheDir)
		}
	}
	var s startSample
	if first {
		if _, err := pagecache.Evict(paths...); err != nil {
			return s, err
		}
	}
	u, err := pagecache.Resident(paths...)
	if err != nil {
		return s, err
	}
	s.resident = u.Fraction()
	args := append([]string{"serve", "--model", b.dir, "--quant", q.String(), "--threads", strconv.Itoa(b.threads),
		"--ort-lib", b.ortLib, "--tokenizer", b.tok, "--store", "none", "--addr", "127.0.0.1:0", "--log-level", "warn"}, append(b.dev.Args(), flags...)...)
	reqs := benchWorkload(2, b.candidates, 7)
	err = timeServeStart(context.Background(), b.exe, args, func(pid int, url string, ready float64) error {
		s.ready = ready
		s.cpu, s.majflt = procCPU(pid)
		s.readMB = procReadMB(pid)
		s.peak = statusPeakMB(strconv.Itoa(pid))
		c, err := client.New(client.Config{BaseURL: url, MaxRetries: -1})
		if err != nil {
			return err
		}
		for i, r := range reqs {
			docs := make([]api.Document, len(r.Docs))
			for j, d := range r.Docs {
				docs[j] = api.Document{Text: d}
			}
			t0 := time.Now()
			if _, err := c.Rerank(context.Background(), api.RerankRequest{Query: r.Query, Instruction: r.Instruction, Documents: docs}); err != nil {
				return fmt.Errorf("request %d after ready: %w", i+1, err)
			}
			if i == 0 {
				s.first = time.Since(t0).Seconds()
			} else {
				s.second = time.Since(t0).Seconds()
			}
		}
		s.peakAfter = statusPeakMB(strconv.Itoa(pid))
		return nil
	})
	return s, err
}

// timeServeStart starts exe with serve args, waits for the banner and
// then for the first 200 from /ready, and calls ready with the process,
// its address and the seconds since it started; the process is stopped
// when ready returns.
func timeServeStart(ctx context.Context, exe string, args []string, ready func(pid int, url string, readyS float64) error) error {
	// Five minutes to become ready; what ready does after that (requests
	// of a full-size model on a busy host) has no limit of its own.
	readyCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), "RERANKD_TEST_AS_CLI=1") // a test binary standing in for rerankd

	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	// A serve that hangs before its banner or /ready is killed at the
	// deadline; the ready callback's own time is not limited.
	disarm := context.AfterFunc(readyCtx, func() { _ = cmd.Process.Kill() })
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	m := bannerURL.FindStringSubmatch(line)
	if err != nil || m == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // stderr is complete after Wait
		stopped = true
		return fmt.Errorf("serve printed %q (read: %w); stderr: %s", line, err, stderr.String())
	}
	for {
		req, err := http.NewRequestWithContext(readyCtx, http.MethodGet, m[1]+"/ready", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if readyCtx.Err() != nil {
			return errors.New("serve never became ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	readyS := time.Since(t0).Seconds()
	if !disarm() {
		return errors.New("serve never became ready")
	}
	return ready(cmd.Process.Pid, m[1], readyS)
}

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ, 100 on
// every Linux architecture Go supports).
const clockTicks = 100

// procCPU is the process's user+system CPU seconds and major page faults
// so far, from /proc/PID/stat (0 where there is none).
func procCPU(pid int) (cpuS, majflt float64) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// The command name may hold spaces: fields count from after its ')'.
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(string(raw[i+1:]))
	// After ')': state(0) ppid pgrp session tty tpgid flags minflt cminflt
	// majflt(9) cmajflt utime(11) stime(12).
	if len(f) < 13 {
		return 0, 0
	}
	mj, _ := strconv.ParseFloat(f[9], 64)
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clockTicks, mj
}

// procReadMB is what the process has read from storage (read_bytes of
// /proc/PID/io: page-cache hits excluded), in MiB.
func procReadMB(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "read_bytes:"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return n / (1 << 20)
		}
	}
	return 0
}

// rerankdExe is the rerankd binary the lab starts to time serve: the one
// beside this rerankd-bench (make build writes both to bin/), else
// rerankd on the PATH. A test binary stands in for rerankd itself
// (RERANKD_TEST_AS_CLI: its TestMain runs serve).
func rerankdExe() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if name := filepath.Base(self); name != "rerankd-bench" && name != "rerankd-bench.exe" {
		return self, nil // a test binary
	}
	exe := filepath.Join(filepath.Dir(self), "rerankd")
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	if p, err := exec.LookPath("rerankd"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no rerankd beside %s nor on the PATH: make build writes bin/rerankd", self)
}
