//go:build !linux

package pagecache

// Supported reports whether Evict and Resident work on this system.
const Supported = false

func evictFile(string) error { return ErrUnsupported }

func residentFile(string) (int64, int64, error) { return 0, 0, ErrUnsupported }

func prefetchFile(string, []Range) error { return nil }
