// Package atomicfile writes files so that a reader, or a crash, sees the
// old file or the new one, never a torn one: rerankd's one atomic write.
//
// Write puts the new contents in a temporary file in the same folder (a
// rename is atomic only within one file system), fsyncs it, renames it
// over the destination and fsyncs the folder, so that the rename itself
// survives a power loss. Skipping either fsync is the usual mistake: the
// first lets a crash leave a renamed but empty or partial file, the
// second lets it forget the rename.
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
func Write(path string, perm fs.FileMode, pattern string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if pattern == "" {
		pattern = "." + filepath.Base(path) + ".tmp-*"
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()      // already failing
			_ = os.Remove(tmp) // the destination is untouched
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
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
