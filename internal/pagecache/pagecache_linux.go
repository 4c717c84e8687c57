//go:build linux

package pagecache

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported reports whether Evict and Resident work on this system.
const Supported = true

func evictFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // read-only
	fd := int(f.Fd())
	// Dirty pages are skipped by DONTNEED: a file just written (a model
	// generated a moment ago) must reach the disk first.
	if err := unix.Fdatasync(fd); err != nil {
		return fmt.Errorf("fdatasync: %w", err)
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("fadvise DONTNEED: %w", err)
	}
	return nil
}

func residentFile(path string) (size, resident int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close() //nolint:errcheck // read-only
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size = st.Size()
	if size == 0 {
		return 0, 0, nil
	}
	page := int64(os.Getpagesize())
	// A mapping is never touched, so counting faults nothing in; large
	// files are counted a window at a time to keep the address space small.
	const window = 1 << 30
	vec := make([]byte, (min(size, window)+page-1)/page)
	for off := int64(0); off < size; off += window {
		n := min(size-off, window)
		m, err := unix.Mmap(int(f.Fd()), off, int(n), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return 0, 0, fmt.Errorf("mmap: %w", err)
		}
		pages := (n + page - 1) / page
		err = mincore(m, vec[:pages])
		_ = unix.Munmap(m)
		if err != nil {
			return 0, 0, fmt.Errorf("mincore: %w", err)
		}
		for i, v := range vec[:pages] {
			if v&1 == 0 {
				continue
			}
			resident += min(page, n-int64(i)*page)
		}
	}
	return size, resident, nil
}

func prefetchFile(path string, ranges []Range) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // read-only
	if len(ranges) == 0 {
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_WILLNEED)
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	for _, r := range ranges {
		if r.Off < 0 || r.Len <= 0 || r.Off >= st.Size() {
			continue
		}
		n := min(r.Len, st.Size()-r.Off)
		if err := unix.Fadvise(int(f.Fd()), r.Off, n, unix.FADV_WILLNEED); err != nil {
			return fmt.Errorf("fadvise WILLNEED: %w", err)
		}
	}
	return nil
}

// mincore fills vec with one byte per page of m, bit 0 set for a page in
// memory (x/sys/unix has no wrapper for it).
func mincore(m []byte, vec []byte) error {
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return errno
	}
	return nil
}
