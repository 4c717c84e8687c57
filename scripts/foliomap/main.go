//go:build ignore

// Command foliomap (go run scripts/foliomap/main.go -file FILE) maps a
// file read-only, reads one byte every -step bytes, and prints how much of
// the mapping the kernel made resident (its Rss in /proc/self/smaps)
// against the pages read. It shows how many pages one fault maps, which
// decides how much of a binary or library a process holds after touching
// a little of it. -cold first asks the kernel to drop the file from the
// page cache (posix_fadvise DONTNEED; only pages no one maps go);
// -random advises MADV_RANDOM before the reads. A lab tool for
// docs/perf/encoders-memory.md; Linux only.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	file := flag.String("file", "", "file to map")
	step := flag.Int64("step", 1<<20, "bytes between two reads")
	cold := flag.Bool("cold", false, "drop the file from the page cache first")
	random := flag.Bool("random", false, "madvise(MADV_RANDOM) before reading")
	flag.Parse()
	if *file == "" || *step < 1 {
		fmt.Fprintln(os.Stderr, "usage: foliomap -file FILE [-step BYTES] [-cold] [-random]")
		os.Exit(2)
	}
	f, err := os.Open(*file)
	if err != nil {
		fail(err)
	}
	st, err := f.Stat()
	if err != nil {
		fail(err)
	}
	size := st.Size()
	if *cold {
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			fail(fmt.Errorf("fadvise: %w", err))
		}
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		fail(fmt.Errorf("mmap: %w", err))
	}
	if *random {
		if err := unix.Madvise(mem, unix.MADV_RANDOM); err != nil {
			fail(fmt.Errorf("madvise: %w", err))
		}
	}
	var sum byte
	reads := 0
	for off := int64(0); off < size; off += *step {
		sum += mem[off]
		reads++
	}
	rss, err := mappingRss(*file)
	if err != nil {
		fail(err)
	}
	fmt.Printf("file %d KiB, %d reads of one byte (%d KiB apart), resident %d KiB of the mapping: %.0f KiB a read (checksum %d)\n",
		size/1024, reads, *step/1024, rss, float64(rss)/float64(reads), sum)
}

// mappingRss returns the Rss, in KiB, of this process's mapping of path.
func mappingRss(path string) (int64, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return 0, err
	}
	sm, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer sm.Close()
	sc := bufio.NewScanner(sm)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) >= 6 && strings.Contains(f[0], "-") {
			in = f[len(f)-1] == abs
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimPrefix(line, "Rss:"), "%d", &kb); err != nil {
				return 0, err
			}
			return kb, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no mapping of %s in /proc/self/smaps", abs)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "foliomap:", err)
	os.Exit(1)
}
