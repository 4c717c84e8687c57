package bolt

import (
	"fmt"
	"os"
	"time"

	"github.com/rerankd/rerankd/retrieval/store"
)

// Defaults applied by Options.withDefaults.
const (
	DefaultLockTimeout = time.Second
	DefaultFileMode    = os.FileMode(0o600)
)

// Options configures Open. The zero value is valid and safe (durable).
type Options struct {
	// LockTimeout is how long Open waits for the exclusive file lock held by
	// another process before failing. Zero means DefaultLockTimeout (1s);
	// negative is invalid.
	LockTimeout time.Duration

	// NoSync skips fsync on commit. Writes then survive a process crash but
	// NOT a power loss or kernel crash. Default false: a write is acknowledged
	// only after fsync. Only for tests, benchmarks and rebuildable data.
	NoSync bool

	// ReadOnly opens the file with a shared lock and refuses writes (e.g. for
	// `rerankd store check`). The file must already exist.
	ReadOnly bool

	// Dimension, when non-zero, is the only vector dimension Put accepts.
	// Zero accepts any dimension in 1..MaxDimension.
	Dimension int

	// FileMode is the permission of a newly created file. Zero means
	// DefaultFileMode (0600: memories are private).
	FileMode os.FileMode
}

// Validate reports an invalid option.
func (o Options) Validate() error {
	if o.LockTimeout < 0 {
		return fmt.Errorf("%w: options: LockTimeout %v is negative", store.ErrInvalid, o.LockTimeout)
	}
	if o.Dimension < 0 || o.Dimension > store.MaxDimension {
		return fmt.Errorf("%w: options: Dimension %d not in 0..%d", store.ErrInvalid, o.Dimension, store.MaxDimension)
	}
	if o.FileMode&^os.ModePerm != 0 {
		return fmt.Errorf("%w: options: FileMode %v has non-permission bits", store.ErrInvalid, o.FileMode)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.LockTimeout == 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.FileMode == 0 {
		o.FileMode = DefaultFileMode
	}
	return o
}
