package hnsw

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
)

// Saved indexes. Why persist at all: the store keeps every vector, so an
// index can always be rebuilt, but rebuilding our HNSW costs EfConstruction
// beam searches per vector (minutes for 100k×1024 on two cores, see the
// package documentation) while loading a saved graph is a sequential read.
//
// Layout (little endian):
//
//	magic   8 bytes: "RRKHNSW", then the format version (1)
//	config  Dim, M, EfConstruction, EfSearch as uvarints, Seed as a varint,
//	        ScanContrast as float64 bits
//	body    nodes, links and vectors (see HNSW.Save)
//	crc     CRC-32C of every byte before it, 4 bytes
//
// Vectors are stored already normalised, so Load does no arithmetic.

const formatVersion = 1

var (
	magicNative = [8]byte{'R', 'R', 'K', 'H', 'N', 'S', 'W', formatVersion}

	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// ErrCorrupt is returned, wrapped with what was wrong, by Load for input
// that is not a saved index of a known format version, is truncated, or
// fails its checksum or consistency checks.
var ErrCorrupt = errors.New("hnsw: corrupt or unsupported saved index")

// Saver is implemented by the indexes whose state Load reads back: HNSW.
// (Flat has no graph to save; rebuilding it is a copy.)
type Saver interface {
	Save(w io.Writer) error
}

var _ Saver = (*HNSW)(nil)

// maxLevelLimit bounds a node's level on Load: with P(level >= l) = M^-l
// and M >= 2, a level above 64 needs more than 2^64 nodes.
const maxLevelLimit = 64

// Load reads an index written by HNSW.Save and returns it with the saved
// configuration.
func Load(r io.Reader) (Index, error) {
	d := newDecoder(r)
	var magic [8]byte
	d.bytes(magic[:])
	if d.err != nil {
		return nil, fmt.Errorf("hnsw.Load: %w: reading header: %w", ErrCorrupt, d.err)
	}
	var x interface {
		Index
		load(d *decoder) error
	}
	cfg := d.config()
	if d.err != nil {
		return nil, fmt.Errorf("hnsw.Load: %w: reading config: %w", ErrCorrupt, d.err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("hnsw.Load: %w: %w", ErrCorrupt, err)
	}
	if magic != magicNative {
		return nil, fmt.Errorf("hnsw.Load: %w: unknown magic %q", ErrCorrupt, magic[:])
	}
	h, _ := New(cfg)
	x = h
	if err := x.load(d); err != nil {
		return nil, fmt.Errorf("hnsw.Load: %w: %w", ErrCorrupt, err)
	}
	if err := d.checksum(); err != nil {
		return nil, fmt.Errorf("hnsw.Load: %w: %w", ErrCorrupt, err)
	}
	return x, nil
}

// Save writes the index to w in the format Load reads. It holds the read
// lock, so searches continue while it writes.
func (h *HNSW) Save(w io.Writer) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	e := newEncoder(w)
	e.bytes(magicNative[:])
	e.config(h.cfg)
	// body: node count, entry, max level; per node: id, alive, level and
	// the link lists of layers 0..level; then all vectors, node order.
	e.uvarint(uint64(len(h.ids)))
	e.uvarint(uint64(h.entry))
	e.uvarint(uint64(h.maxLevel))
	for n, id := range h.ids {
		e.str(id)
		e.bool(h.alive[n])
		e.uvarint(uint64(len(h.links[n]) - 1))
		for _, l := range h.links[n] {
			e.uvarint(uint64(len(l)))
			for _, x := range l {
				e.u32(x)
			}
		}
	}
	e.floats(h.vecs)
	return e.finish()
}

func (h *HNSW) load(d *decoder) error {
	n := d.count("nodes", math.MaxUint32)
	entry := d.uvarint()
	maxLevel := d.uvarint()
	if d.err != nil {
		return d.err
	}
	if n > 0 && (entry >= uint64(n) || maxLevel > maxLevelLimit) {
		return fmt.Errorf("entry %d / max level %d out of range for %d nodes", entry, maxLevel, n)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Grow slices as data arrives rather than trusting n for allocation:
	// a corrupt count must fail at end of input, not exhaust memory.
	for i := range n {
		id := d.str()
		alive := d.bool()
		level := d.count("level", maxLevelLimit)
		if d.err != nil {
			return fmt.Errorf("node %d: %w", i, d.err)
		}
		ls := make([][]uint32, level+1)
		for l := range ls {
			m := d.count("links", h.maxLinks(l))
			ls[l] = make([]uint32, 0, min(m, h.maxLinks(l))+1)
			for range m {
				x := d.u32()
				if x >= uint32(n) || x == uint32(i) {
					return fmt.Errorf("node %d layer %d: link %d out of range", i, l, x)
				}
				ls[l] = append(ls[l], x)
			}
		}
		if d.err != nil {
			return fmt.Errorf("node %d: %w", i, d.err)
		}
		h.ids = append(h.ids, id)
		h.alive = append(h.alive, alive)
		h.links = append(h.links, ls)
		if alive {
			if _, dup := h.byID[id]; dup {
				return fmt.Errorf("id %q is live twice", id)
			}
			h.byID[id] = uint32(i)
		} else {
			h.dead++
		}
	}
	// A link on layer l must point at a node that has layer l.
	for i, ls := range h.links {
		for l, list := range ls {
			for _, x := range list {
				if len(h.links[x]) <= l {
					return fmt.Errorf("node %d layer %d: link to node %d, which has no layer %d", i, l, x, l)
				}
			}
		}
	}
	if n > 0 && len(h.links[entry])-1 != int(maxLevel) {
		return fmt.Errorf("entry node %d has level %d, max level is %d", entry, len(h.links[entry])-1, maxLevel)
	}
	h.vecs = d.floats(n * h.cfg.Dim)
	if d.err != nil {
		return fmt.Errorf("vectors: %w", d.err)
	}
	h.entry, h.maxLevel = uint32(entry), int(maxLevel)
	// Continue level generation from a seed that depends on the saved
	// state, so load-then-insert sequences are reproducible too.
	h.rng.Seed(h.cfg.Seed ^ int64(uint64(n)*0x9e3779b97f4a7c15)) //nolint:gosec // wrap-around is fine for a seed
	return nil
}

// encoder writes the format with a running CRC and a sticky error.
type encoder struct {
	w   *bufio.Writer
	crc hash.Hash32
	err error
	buf [binary.MaxVarintLen64]byte
	big []byte
}

func newEncoder(w io.Writer) *encoder {
	return &encoder{w: bufio.NewWriterSize(w, 1<<16), crc: crc32.New(castagnoli)}
}

// Write makes the encoder an io.Writer.
func (e *encoder) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	e.crc.Write(p) //nolint:errcheck // hash writes never fail
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *encoder) bytes(p []byte)   { _, _ = e.Write(p) }
func (e *encoder) uvarint(x uint64) { e.bytes(e.buf[:binary.PutUvarint(e.buf[:], x)]) }
func (e *encoder) varint(x int64)   { e.bytes(e.buf[:binary.PutVarint(e.buf[:], x)]) }
func (e *encoder) u32(x uint32)     { e.bytes(binary.LittleEndian.AppendUint32(e.buf[:0], x)) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.bytes([]byte(s)) }
func (e *encoder) bool(b bool) {
	if b {
		e.bytes([]byte{1})
	} else {
		e.bytes([]byte{0})
	}
}
func (e *encoder) config(cfg Config) {
	for _, x := range []int{cfg.Dim, cfg.M, cfg.EfConstruction, cfg.EfSearch} {
		e.uvarint(uint64(x))
	}
	e.varint(cfg.Seed)
	e.bytes(binary.LittleEndian.AppendUint64(nil, math.Float64bits(cfg.ScanContrast)))
}

func (e *encoder) floats(v []float32) {
	const chunk = 1 << 14
	if e.big == nil {
		e.big = make([]byte, 0, 4*chunk)
	}
	for len(v) > 0 && e.err == nil {
		c := v[:min(chunk, len(v))]
		v = v[len(c):]
		b := e.big[:0]
		for _, f := range c {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
		e.bytes(b)
	}
}

func (e *encoder) finish() error {
	if e.err == nil {
		sum := e.crc.Sum32()
		e.bytes(binary.LittleEndian.AppendUint32(nil, sum))
	}
	if e.err == nil {
		e.err = e.w.Flush()
	}
	if e.err != nil {
		return fmt.Errorf("hnsw save: %w", e.err)
	}
	return nil
}

// decoder reads the format with a running CRC and a sticky error; it is
// an io.Reader and io.ByteReader over the checksummed bytes.
type decoder struct {
	r   *bufio.Reader
	crc hash.Hash32
	err error
}

func newDecoder(r io.Reader) *decoder {
	return &decoder{r: bufio.NewReaderSize(r, 1<<16), crc: crc32.New(castagnoli)}
}

func (d *decoder) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	n, err := d.r.Read(p)
	d.crc.Write(p[:n]) //nolint:errcheck // hash writes never fail
	return n, err
}

func (d *decoder) ReadByte() (byte, error) {
	if d.err != nil {
		return 0, d.err
	}
	b, err := d.r.ReadByte()
	if err == nil {
		d.crc.Write([]byte{b}) //nolint:errcheck // hash writes never fail
	}
	return b, err
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		d.err = err
	}
}

func (d *decoder) bytes(p []byte) {
	if d.err != nil {
		return
	}
	if _, err := io.ReadFull(d, p); err != nil {
		d.fail(err)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, err := binary.ReadUvarint(d)
	if err != nil {
		d.fail(err)
	}
	return x
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, err := binary.ReadVarint(d)
	if err != nil {
		d.fail(err)
	}
	return x
}

// count reads a uvarint that must be at most limit.
func (d *decoder) count(what string, limit int) int {
	x := d.uvarint()
	if d.err == nil && x > uint64(limit) {
		d.fail(fmt.Errorf("%s count %d exceeds %d", what, x, limit))
	}
	if d.err != nil {
		return 0
	}
	return int(x)
}

func (d *decoder) u32() uint32 {
	var b [4]byte
	d.bytes(b[:])
	return binary.LittleEndian.Uint32(b[:])
}

// maxIDLen bounds an id on Load, against allocation bombs; memory ids are
// short strings.
const maxIDLen = 1 << 16

func (d *decoder) str() string {
	n := d.count("id bytes", maxIDLen)
	b := make([]byte, n)
	d.bytes(b)
	return string(b)
}

func (d *decoder) bool() bool {
	var b [1]byte
	d.bytes(b[:])
	if d.err == nil && b[0] > 1 {
		d.fail(fmt.Errorf("bool byte %d", b[0]))
	}
	return b[0] == 1
}

func (d *decoder) config() Config {
	var x [4]int
	for i := range x {
		x[i] = d.count("config value", math.MaxInt32)
	}
	cfg := Config{Dim: x[0], M: x[1], EfConstruction: x[2], EfSearch: x[3], Seed: d.varint()}
	var b [8]byte
	d.bytes(b[:])
	cfg.ScanContrast = math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
	return cfg
}

// floats reads n float32 values, growing the slice in chunks so that a
// corrupt n fails at end of input instead of allocating it up front.
func (d *decoder) floats(n int) []float32 {
	const chunk = 1 << 14
	out := make([]float32, 0, min(n, 1<<20))
	b := make([]byte, 4*chunk)
	for len(out) < n && d.err == nil {
		c := min(chunk, n-len(out))
		d.bytes(b[:4*c])
		for i := range c {
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	}
	return out
}

// checksum reads the trailing CRC and compares it with what was read.
func (d *decoder) checksum() error {
	if d.err != nil {
		return d.err
	}
	want := d.crc.Sum32()
	var b [4]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		return fmt.Errorf("checksum: %w", io.ErrUnexpectedEOF)
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != want {
		return fmt.Errorf("checksum %08x, computed %08x", got, want)
	}
	return nil
}
