package retrieval

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

// Snapshot files: one per namespace in Config.Owner.SnapshotDir, named by a
// hash of the namespace (namespaces may differ only in letter case, which
// some file systems fold, and may be longer than a file name may be).
//
//	[0:8]      magic "RRKSNAP" + format version (1)
//	[8:12]     header length n, uint32 little endian, at most 64 KiB
//	[12:12+n]  header: JSON snapHeader
//	[+4]       CRC-32C (Castagnoli) of the header, little endian
//	rest       the vector index as hnsw's Save writes it (own CRC-32C)
//
// The header is small and first, so that a stale snapshot (the common
// miss) is refused without reading the index.

var snapMagic = [8]byte{'R', 'R', 'K', 'S', 'N', 'A', 'P', 1}

const (
	snapExt       = ".hnsw"
	snapTmpPrefix = ".tmp-"
	maxSnapHeader = 64 << 10
)

var snapCRC = crc32.MakeTable(crc32.Castagnoli)

// snapHeader describes a snapshot: which namespace, at which store
// generation, and the index parameters it was built with.
type snapHeader struct {
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

// savable is a vector index the engine can snapshot: hnsw.HNSW (Flat has
// no graph worth saving).
type savable interface {
	index.VectorIndex
	hnsw.Saver
	Config() hnsw.Config
	Dim() int
	SetSearch(efSearch int, scanContrast float64) error
}

// snapName is ns's snapshot file name.
func snapName(ns string) string {
	sum := sha256.Sum256([]byte(ns))
	return hex.EncodeToString(sum[:16]) + snapExt
}

// isSnapName reports whether a directory entry is a snapshot file (not a
// temporary one, not someone else's file).
func isSnapName(name string) bool {
	hexPart, ok := strings.CutSuffix(name, snapExt)
	if !ok || len(hexPart) != 32 {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil
}

// missError says why a snapshot was not used. kind is one of missing,
// unreadable, corrupt, stale, dimension, config, unsupported, replay.
type missError struct{ kind, detail string }

func (m *missError) Error() string { return m.kind + ": " + m.detail }

func miss(kind, format string, args ...any) error {
	return &missError{kind: kind, detail: fmt.Sprintf(format, args...)}
}

// snapWant is what a usable snapshot must match.
type snapWant struct {
	ns    string
	gen   store.VectorGen
	dim   int
	index hnsw.Config
}

// sameStructure reports whether two index configurations build the same
// graph. EfSearch and ScanContrast are search-time settings, applied to a
// loaded index rather than refusing it.
func sameStructure(a, b hnsw.Config) bool {
	return a.Dim == b.Dim && a.M == b.M && a.EfConstruction == b.EfConstruction && a.Seed == b.Seed
}

// readSnap loads the snapshot at path if it matches want; otherwise it
// returns a *missError saying why not. It never panics on damaged input
// (hnsw.Load checks counts, links and its CRC).
func readSnap(path string, want snapWant) (savable, snapHeader, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, snapHeader{}, miss("missing", "no snapshot file")
	}
	if err != nil {
		return nil, snapHeader{}, miss("unreadable", "%v", err)
	}
	defer func() { _ = f.Close() }() // read-only
	return decodeSnap(bufio.NewReaderSize(f, 1<<20), want, func(h snapHeader) error {
		switch {
		case want.gen.IsZero():
			return miss("stale", "the store records no vector generation for the namespace (last written by an older rerankd)")
		case h.Gen != want.gen:
			return miss("stale", "saved at vector generation %v, the store is at %v", h.Gen, want.gen)
		}
		return nil
	})
}

// decodeSnap reads a snapshot from r: its header, which must be want's
// namespace, dimension and index structure and pass fresh, then the
// index.
func decodeSnap(r io.Reader, want snapWant, fresh func(snapHeader) error) (savable, snapHeader, error) {
	h, err := readSnapHeader(r)
	if err != nil {
		return nil, h, miss("corrupt", "header: %v", err)
	}
	if h.Namespace != want.ns {
		return nil, h, miss("corrupt", "snapshot is for namespace %q", h.Namespace)
	}
	if err := fresh(h); err != nil {
		return nil, h, err
	}
	switch {
	case h.Dim != want.dim:
		return nil, h, miss("dimension", "saved with dimension %d, the engine has %d", h.Dim, want.dim)
	case !sameStructure(h.Index, want.index):
		return nil, h, miss("config", "saved with index %+v, the engine builds %+v", h.Index, want.index)
	}
	x, err := hnsw.Load(r)
	if err != nil {
		return nil, h, miss("corrupt", "%v", err)
	}
	idx, ok := x.(savable)
	if !ok || !sameStructure(idx.Config(), h.Index) || idx.Dim() != want.dim {
		return nil, h, miss("corrupt", "index body (%T) does not match its header", x)
	}
	return idx, h, nil
}

func readSnapHeader(r io.Reader) (snapHeader, error) {
	var h snapHeader
	var pre [12]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return h, fmt.Errorf("reading magic: %w", err)
	}
	if [8]byte(pre[:8]) != snapMagic {
		return h, fmt.Errorf("bad magic %q (not a snapshot, or another format version)", pre[:8])
	}
	n := binary.LittleEndian.Uint32(pre[8:])
	if n > maxSnapHeader {
		return h, fmt.Errorf("header length %d exceeds %d", n, maxSnapHeader)
	}
	buf := make([]byte, n+4)
	if _, err := io.ReadFull(r, buf); err != nil {
		return h, fmt.Errorf("reading %d header bytes: %w", n, err)
	}
	body := buf[:n]
	if got, want := crc32.Checksum(body, snapCRC), binary.LittleEndian.Uint32(buf[n:]); got != want {
		return h, fmt.Errorf("header checksum %08x, want %08x", got, want)
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return h, fmt.Errorf("header JSON: %w", err)
	}
	return h, nil
}

// writeSnap writes h and idx to dir atomically (atomicfile.Write: a
// temporary file named snapTmpPrefix…snapExt in dir, fsynced, renamed over
// the old snapshot, dir fsynced), so a crash leaves the old file or the
// new one, never a torn one.
func writeSnap(dir string, h snapHeader, idx hnsw.Saver) error {
	path := filepath.Join(dir, snapName(h.Namespace))
	err := atomicfile.Write(path, 0o600, snapTmpPrefix+"*"+snapExt, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := encodeSnap(w, h, idx); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// encodeSnap writes h and idx to w in the snapshot format.
func encodeSnap(w io.Writer, h snapHeader, idx hnsw.Saver) error {
	hdr, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	pre := append(make([]byte, 0, 16+len(hdr)), snapMagic[:]...)
	pre = binary.LittleEndian.AppendUint32(pre, uint32(len(hdr))) //nolint:gosec // JSON of a few fields, far below 4 GiB
	pre = append(pre, hdr...)
	pre = binary.LittleEndian.AppendUint32(pre, crc32.Checksum(hdr, snapCRC))
	if _, err := w.Write(pre); err != nil {
		return err
	}
	return idx.Save(w)
}
