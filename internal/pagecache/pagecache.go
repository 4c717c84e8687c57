package pagecache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// ErrUnsupported is returned where the operating system offers no way to
// drop or count cached pages.
var ErrUnsupported = errors.New("page cache control is not supported on this system")

// Range is a byte range of a file.
type Range struct {
	Off, Len int64
}

// Usage is how much of a set of files is in the page cache.
type Usage struct {
	Files         int   // regular files counted
	Bytes         int64 // their total size
	ResidentBytes int64 // bytes of their pages in memory (whole pages, clipped to each file's size)
}

// Fraction is ResidentBytes over Bytes (0 for no bytes).
func (u Usage) Fraction() float64 {
	if u.Bytes == 0 {
		return 0
	}
	return float64(u.ResidentBytes) / float64(u.Bytes)
}

// Files lists the regular files under each path (a file, or a folder
// walked recursively), sorted and without repeats; symbolic links are
// followed for the paths given, not inside folders.
func Files(paths ...string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("page cache: %w", err)
		}
		if !st.IsDir() {
			if st.Mode().IsRegular() {
				add(p)
			}
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				add(path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("page cache: %w", err)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Evict drops every file under paths (files or folders) from the page
// cache, after writing back its dirty pages, and reports what is still
// resident afterwards (pages mapped by a running process stay).
func Evict(paths ...string) (Usage, error) {
	files, err := Files(paths...)
	if err != nil {
		return Usage{}, err
	}
	var errs []error
	for _, f := range files {
		if err := evictFile(f); err != nil {
			errs = append(errs, fmt.Errorf("evict %s: %w", f, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Usage{}, err
	}
	return residentFiles(files)
}

// Resident counts how much of every file under paths is in the page cache.
func Resident(paths ...string) (Usage, error) {
	files, err := Files(paths...)
	if err != nil {
		return Usage{}, err
	}
	return residentFiles(files)
}

func residentFiles(files []string) (Usage, error) {
	var u Usage
	for _, f := range files {
		size, res, err := residentFile(f)
		if err != nil {
			return Usage{}, fmt.Errorf("resident %s: %w", f, err)
		}
		u.Files++
		u.Bytes += size
		u.ResidentBytes += res
	}
	return u, nil
}

// Prefetch asks the kernel to start reading ranges of path (all of it
// for none) into the page cache, and returns without waiting for the
// reads.
func Prefetch(path string, ranges ...Range) error {
	return prefetchFile(path, ranges)
}
