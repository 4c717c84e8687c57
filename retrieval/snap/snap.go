package snap

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rerankd/rerankd/internal/atomicfile"
	"github.com/rerankd/rerankd/retrieval/hnsw"
	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/store"
)

var magic = [8]byte{'R', 'R', 'K', 'S', 'N', 'A', 'P', 1}

// Ext ends a snapshot file's name; a temporary file of a save in progress
// is named TmpPrefix…Ext (removed when a crash left one behind).
const (
	Ext       = ".hnsw"
	TmpPrefix = ".tmp-"
)

const maxHeader = 64 << 10

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Header describes a snapshot: which namespace, at which store
// generation, and the index parameters it was built with.
type Header struct {
	Namespace string          `json:"namespace"`
	Gen       store.VectorGen `json:"gen"`
	// Seq is the shared store's change sequence the index holds every
	// change up to (snapshots kept in a shared store; 0 in files).
	Seq     uint64      `json:"seq,omitempty"`
	Dim     int         `json:"dim"`
	Index   hnsw.Config `json:"index"`
	Vectors int         `json:"vectors"` // informational
	Saved   time.Time   `json:"saved"`
}

// Savable is a vector index a keeper can snapshot: hnsw.HNSW (Flat has
// no graph worth saving).
type Savable interface {
	index.VectorIndex
	hnsw.Saver
	Config() hnsw.Config
	Dim() int
	SetSearch(efSearch int, scanContrast float64) error
}

// Name is ns's snapshot file name.
func Name(ns string) string {
	sum := sha256.Sum256([]byte(ns))
	return hex.EncodeToString(sum[:16]) + Ext
}

// IsName reports whether a directory entry is a snapshot file (not a
// temporary one, not someone else's file).
func IsName(name string) bool {
	hexPart, ok := strings.CutSuffix(name, Ext)
	if !ok || len(hexPart) != 32 {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil
}

// MissError says why a snapshot was not used. kind is one of missing,
// unreadable, corrupt, stale, dimension, config, unsupported, replay.
type MissError struct{ Kind, Detail string }

func (m *MissError) Error() string { return m.Kind + ": " + m.Detail }

// Miss returns a *MissError.
func Miss(kind, format string, args ...any) error {
	return &MissError{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// Want is what a usable snapshot must match.
type Want struct {
	Namespace string
	Gen       store.VectorGen // of a file: the store's current one
	Dim       int
	Index     hnsw.Config
}

// sameStructure reports whether two index configurations build the same
// graph. EfSearch and ScanContrast are search-time settings, applied to a
// loaded index rather than refusing it.
func sameStructure(a, b hnsw.Config) bool {
	return a.Dim == b.Dim && a.M == b.M && a.EfConstruction == b.EfConstruction && a.Seed == b.Seed
}

// Read loads the snapshot at path if it matches want; otherwise it
// returns a *MissError saying why not. It never panics on damaged input
// (hnsw.Load checks counts, links and its CRC).
func Read(path string, want Want) (Savable, Header, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Header{}, Miss("missing", "no snapshot file")
	}
	if err != nil {
		return nil, Header{}, Miss("unreadable", "%v", err)
	}
	defer func() { _ = f.Close() }() // read-only
	return Decode(bufio.NewReaderSize(f, 1<<20), want, func(h Header) error {
		switch {
		case want.Gen.IsZero():
			return Miss("stale", "the store records no vector generation for the namespace (last written by an older rerankd)")
		case h.Gen != want.Gen:
			return Miss("stale", "saved at vector generation %v, the store is at %v", h.Gen, want.Gen)
		}
		return nil
	})
}

// Decode reads a snapshot from r: its header, which must be want's
// namespace, dimension and index structure and pass fresh, then the
// index.
func Decode(r io.Reader, want Want, fresh func(Header) error) (Savable, Header, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return nil, h, Miss("corrupt", "header: %v", err)
	}
	if h.Namespace != want.Namespace {
		return nil, h, Miss("corrupt", "snapshot is for namespace %q", h.Namespace)
	}
	if err := fresh(h); err != nil {
		return nil, h, err
	}
	switch {
	case h.Dim != want.Dim:
		return nil, h, Miss("dimension", "saved with dimension %d, the memory service has %d", h.Dim, want.Dim)
	case !sameStructure(h.Index, want.Index):
		return nil, h, Miss("config", "saved with index %+v, the memory service builds %+v", h.Index, want.Index)
	}
	x, err := hnsw.Load(r)
	if err != nil {
		return nil, h, Miss("corrupt", "%v", err)
	}
	idx, ok := x.(Savable)
	if !ok || !sameStructure(idx.Config(), h.Index) || idx.Dim() != want.Dim {
		return nil, h, Miss("corrupt", "index body (%T) does not match its header", x)
	}
	return idx, h, nil
}

// ReadHeader reads and checks a snapshot's header.
func ReadHeader(r io.Reader) (Header, error) {
	var h Header
	var pre [12]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return h, fmt.Errorf("reading magic: %w", err)
	}
	if [8]byte(pre[:8]) != magic {
		return h, fmt.Errorf("bad magic %q (not a snapshot, or another format version)", pre[:8])
	}
	n := binary.LittleEndian.Uint32(pre[8:])
	if n > maxHeader {
		return h, fmt.Errorf("header length %d exceeds %d", n, maxHeader)
	}
	buf := make([]byte, n+4)
	if _, err := io.ReadFull(r, buf); err != nil {
		return h, fmt.Errorf("reading %d header bytes: %w", n, err)
	}
	body := buf[:n]
	if got, want := crc32.Checksum(body, crcTable), binary.LittleEndian.Uint32(buf[n:]); got != want {
		return h, fmt.Errorf("header checksum %08x, want %08x", got, want)
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return h, fmt.Errorf("header JSON: %w", err)
	}
	return h, nil
}

// Write writes h and idx to dir atomically (atomicfile.Write: a
// temporary file named TmpPrefix…Ext in dir, fsynced, renamed over
// the old snapshot, dir fsynced), so a crash leaves the old file or the
// new one, never a torn one.
func Write(dir string, h Header, idx hnsw.Saver) error {
	path := filepath.Join(dir, Name(h.Namespace))
	err := atomicfile.Write(path, 0o600, TmpPrefix+"*"+Ext, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := Encode(w, h, idx); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Encode writes h and idx to w in the snapshot format.
func Encode(w io.Writer, h Header, idx hnsw.Saver) error {
	hdr, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	pre := append(make([]byte, 0, 16+len(hdr)), magic[:]...)
	pre = binary.LittleEndian.AppendUint32(pre, uint32(len(hdr))) //nolint:gosec // JSON of a few fields, far below 4 GiB
	pre = append(pre, hdr...)
	pre = binary.LittleEndian.AppendUint32(pre, crc32.Checksum(hdr, crcTable))
	if _, err := w.Write(pre); err != nil {
		return err
	}
	return idx.Save(w)
}

// Kind is the kind of a *MissError ("" for other errors).
func Kind(err error) string {
	var m *MissError
	if errors.As(err, &m) {
		return m.Kind
	}
	return ""
}

// SearchSettings gives a loaded index the memory service's search-time settings
// (a snapshot keeps those it was saved with).
func SearchSettings(idx Savable, want hnsw.Config) error {
	if cur := idx.Config(); cur.EfSearch != want.EfSearch || cur.ScanContrast != want.ScanContrast {
		if err := idx.SetSearch(want.EfSearch, want.ScanContrast); err != nil {
			return Miss("config", "search settings: %v", err)
		}
	}
	return nil
}
