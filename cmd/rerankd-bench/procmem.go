package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procMemory is one process's memory at one moment, from /proc/PID/status
// (peak and current resident set, split into anonymous and file-backed
// pages) and /proc/PID/smaps (where the resident pages are). MiB.
type procMemory struct {
	Stage  string  `json:"stage"`
	PeakMB float64 `json:"peak_rss_mb"`
	RSSMB  float64 `json:"rss_mb"`
	AnonMB float64 `json:"anon_mb"`
	FileMB float64 `json:"file_mb"`
	// File-backed resident pages by file: the executable's, the ONNX
	// Runtime library's, the model folder's (mapped weights), the rest.
	// Anonymous pages (Go heap, malloc and ONNX Runtime's arena, thread
	// stacks) are not told apart: smaps cannot (Go randomises its heap's
	// addresses).
	BinaryMB    float64 `json:"binary_mb"`
	RuntimeMB   float64 `json:"runtime_lib_mb"`
	ModelMB     float64 `json:"model_files_mb"`
	OtherFileMB float64 `json:"other_files_mb"`
}

// readProcMemory reads process pid's memory; modelDir names the folder
// whose files count as the model's. Fields /proc does not have stay 0.
func readProcMemory(pid int, stage, modelDir string) procMemory {
	m := procMemory{Stage: stage}
	p := "/proc/" + strconv.Itoa(pid)
	if data, err := os.ReadFile(p + "/status"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%f kB", &kb); err != nil {
				continue
			}
			switch k {
			case "VmHWM":
				m.PeakMB = kb / 1024
			case "VmRSS":
				m.RSSMB = kb / 1024
			case "RssAnon":
				m.AnonMB = kb / 1024
			case "RssFile":
				m.FileMB = kb / 1024
			}
		}
	}
	exe, _ := os.Readlink(p + "/exe")
	modelDir, _ = filepath.Abs(modelDir)
	data, err := os.ReadFile(p + "/smaps")
	if err != nil {
		return m
	}
	var slot *float64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if rss, ok := strings.CutPrefix(line, "Rss:"); ok {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(rss), "%f kB", &kb); err == nil && slot != nil {
				*slot += kb / 1024
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 || !strings.Contains(f[0], "-") || strings.HasSuffix(f[0], ":") {
			continue // a field line, not a mapping's header
		}
		path := ""
		if len(f) >= 6 {
			path = f[5]
		}
		switch {
		case path == "" || strings.HasPrefix(path, "["):
			slot = nil // anonymous: counted by RssAnon
		case path == exe:
			slot = &m.BinaryMB
		case strings.Contains(filepath.Base(path), "libonnxruntime"):
			slot = &m.RuntimeMB
		case modelDir != "" && filepath.Dir(path) == modelDir:
			slot = &m.ModelMB
		default:
			slot = &m.OtherFileMB
		}
	}
	return m
}

// String is the one-line form bench prints.
func (m procMemory) String() string {
	return fmt.Sprintf("%s: peak %.0f, RSS %.0f (anonymous %.0f; file-backed %.0f: binary %.0f, ORT library %.0f, model files %.0f, other %.0f) MB",
		m.Stage, m.PeakMB, m.RSSMB, m.AnonMB, m.FileMB, m.BinaryMB, m.RuntimeMB, m.ModelMB, m.OtherFileMB)
}
