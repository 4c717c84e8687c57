// Package atomicfile writes files so that a reader, or a crash, sees the
// old file or the new one, never a torn one: rerankd's one atomic write.
//
// Write puts the new contents in a temporary file in the same folder (a
// rename is atomic only within one file system), fsyncs it, renames it
// over the destination and fsyncs the folder, so that the rename itself
// survives a power loss. Skipping either fsync is the usual mistake: the
// first lets a crash leave a renamed but empty or partial file, the
// second lets it forget the rename.
//
// WriteAll does the same for files that belong together (a graph and its
// data file): every one is written and synced before the first rename, so
// a failed write changes none of them, and the renames go in the order
// given, each made durable before the next. Rename moves a file or folder
// that was filled elsewhere (a resumable download, a folder ONNX Runtime
// wrote) into place with the same fsyncs. No other code in rerankd calls
// os.Rename (TestOneAtomicWrite).
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFile writes data to path atomically, with permissions perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, "", func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write writes path atomically with permissions perm: write fills a
// temporary file in path's folder, named by pattern as os.CreateTemp does
// ("" is "."+base+".tmp-*"; a caller that cleans up leftovers after a
// crash picks one it can recognise). On any error the temporary file is
// removed and path is left as it was. Buffer inside write if it makes
// many small writes: the writer is the file itself.
func Write(path string, perm fs.FileMode, pattern string, write func(io.Writer) error) error {
	return WriteAll(File{Path: path, Perm: perm, Pattern: pattern, Write: write})
}

// File is one file of WriteAll, written as Write writes it.
type File struct {
	Path    string
	Perm    fs.FileMode
	Pattern string // the temporary file's name pattern; "" is "."+base+".tmp-*"
	Write   func(io.Writer) error
}

// WriteAll writes files together: each to a temporary file in its folder,
// synced, and only when every one is written, renamed into place in the
// order given, each rename made durable (its folder fsynced) before the
// next, so that a reader that finds a later file also finds the earlier
// ones (a graph renamed after its data file never points at an old one).
// A failed write leaves every destination as it was and no temporary file
// behind; a crash or a failed rename between the renames leaves the
// earlier files new and the later ones old.
func WriteAll(files ...File) (err error) {
	tmps := make([]string, 0, len(files))
	defer func() {
		for _, tmp := range tmps {
			_ = os.Remove(tmp) // renamed ones are gone already; the error is err
		}
	}()
	for _, f := range files {
		tmp, err := writeTemp(f)
		if err != nil {
			return err
		}
		tmps = append(tmps, tmp)
	}
	for len(tmps) > 0 {
		path := files[len(files)-len(tmps)].Path
		if err := os.Rename(tmps[0], path); err != nil {
			return err
		}
		tmps = tmps[1:]
		if err := SyncDir(filepath.Dir(path)); err != nil {
			return err
		}
	}
	return nil
}

// writeTemp writes f to a synced temporary file next to f.Path and returns
// its name; on error it leaves nothing behind.
func writeTemp(f File) (tmp string, err error) {
	pattern := f.Pattern
	if pattern == "" {
		pattern = "." + filepath.Base(f.Path) + ".tmp-*"
	}
	file, err := os.CreateTemp(filepath.Dir(f.Path), pattern)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			_ = file.Close()           // already failing
			_ = os.Remove(file.Name()) // the destination is untouched
		}
	}()
	if err = f.Write(file); err != nil {
		return "", err
	}
	if err = file.Chmod(f.Perm); err != nil {
		return "", err
	}
	if err = file.Sync(); err != nil {
		return "", fmt.Errorf("fsync %s: %w", file.Name(), err)
	}
	if err = file.Close(); err != nil {
		return "", err
	}
	return file.Name(), nil
}

// Rename moves tmp, a file or a folder filled by other means, over path
// durably: it fsyncs tmp (a folder: every file and folder in it, then
// itself), renames it, and fsyncs path's folder. tmp must be in the same
// file system as path, best in the same folder. On error tmp is left
// where it was, for the caller to remove or resume.
func Rename(tmp, path string) error {
	if err := syncTree(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// syncTree fsyncs the file p, or the folder p with everything in it.
func syncTree(p string) error {
	return filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return SyncDir(q) // its names; its files' data as they are visited
		}
		if !d.Type().IsRegular() {
			return nil // a link or device has nothing of its own to flush
		}
		f, err := os.Open(q)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("fsync %s: %w", q, err)
		}
		return nil
	})
}

// SyncDir fsyncs the folder dir, so that renames and removals in it are
// durable. A file system that cannot sync a folder (EINVAL, unsupported)
// loses nothing more by it: that is not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }() // read-only handle
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
