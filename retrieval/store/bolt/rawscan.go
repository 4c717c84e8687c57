package bolt

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// The raw page scan reads a store file without bbolt, for Salvage: a
// damaged branch page hides every leaf below it from bbolt's tree walk,
// but the leaves' records are self-describing (a memory record names its
// namespace and ID and carries a checksum), so reading every leaf page
// that is in use finds them. Every offset and length read from the file is
// bounds-checked against the page it was read from.
//
// bbolt's on-disk layout (go.etcd.io/bbolt/internal/common), little-endian:
//
//	page header  id u64, flags u16, count u16, overflow u32   (16 bytes)
//	meta         magic u32, version u32, pageSize u32, flags u32,
//	             root {pgid u64, sequence u64}, freelist u64, pgid u64,
//	             txid u64, checksum u64 (FNV-64a of the fields before it)
//	leaf element flags u32, pos u32, ksize u32, vsize u32 (16 bytes); the
//	             key starts pos bytes after the element, the value follows it
//	freelist     count page ids (count 0xFFFF: the first u64 is the count)
//	inline bucket value: {root u64 = 0, sequence u64} then a leaf page
const (
	rawPageHeader   = 16
	rawLeafElement  = 16
	rawFlagBranch   = 0x01
	rawFlagLeaf     = 0x02
	rawFlagMeta     = 0x04
	rawFlagFreelist = 0x10
	rawBucketLeaf   = 0x01
	rawMagic        = 0xED0CDAED
	rawVersion      = 2
	rawMetaLen      = 56 // meta fields before the checksum
	// rawMaxSpan bounds one page with its overflow: larger than any record
	// this store writes (1 MiB of text, MaxDimension float32s).
	rawMaxSpan = 64 << 20
)

// rawMeta is the fields of a valid meta page the scan uses.
type rawMeta struct {
	pageSize            int
	freelist, hwm, txid uint64
}

// rawFound is what scanning the pages found.
type rawFound struct {
	// mems are the intact memory records on leaf pages in use, by key.
	mems map[nsID]memory.Memory
	// vecs are intact vector records by ID, in any namespace (a vector
	// record does not name its namespace); nsVecs those of inline buckets,
	// whose namespace is known.
	vecs   map[string][][]float32
	nsVecs map[nsID][]float32
	// damaged lists the pages in use that did not parse as any page kind.
	damaged []uint64
	// freeKnown is false when no freelist could be read: stale copies of
	// rewritten or deleted records may then be among mems.
	freeKnown bool
}

type nsID struct{ ns, id string }

// readMeta parses a meta page at b (a page, header included).
func readMeta(b []byte) (rawMeta, bool) {
	if len(b) < rawPageHeader+rawMetaLen+8 || binary.LittleEndian.Uint16(b[8:10]) != rawFlagMeta {
		return rawMeta{}, false
	}
	m := b[rawPageHeader:]
	h := fnv.New64a()
	_, _ = h.Write(m[:rawMetaLen])
	if binary.LittleEndian.Uint32(m[0:4]) != rawMagic || binary.LittleEndian.Uint32(m[4:8]) != rawVersion ||
		binary.LittleEndian.Uint64(m[rawMetaLen:]) != h.Sum64() {
		return rawMeta{}, false
	}
	ps := int(binary.LittleEndian.Uint32(m[8:12]))
	if ps < 512 || ps > 1<<20 || ps&(ps-1) != 0 {
		return rawMeta{}, false
	}
	return rawMeta{pageSize: ps, freelist: binary.LittleEndian.Uint64(m[32:40]), hwm: binary.LittleEndian.Uint64(m[40:48]), txid: binary.LittleEndian.Uint64(m[48:56])}, true
}

// scanPages reads every page of the file at path that is not on the
// freelist and collects the intact records of its leaf pages.
func scanPages(path string) (rawFound, error) {
	found := rawFound{mems: map[nsID]memory.Memory{}, vecs: map[string][][]float32{}, nsVecs: map[nsID][]float32{}}
	f, err := os.Open(path)
	if err != nil {
		return found, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return found, err
	}
	size := fi.Size()
	readAt := func(off int64, n int) []byte {
		if off < 0 || off >= size {
			return nil
		}
		n = int(min(int64(n), size-off))
		b := make([]byte, n)
		k, _ := f.ReadAt(b, off)
		return b[:k]
	}
	// The newer valid meta page gives the page size and the freelist.
	var meta rawMeta
	ok := false
	if m, ok0 := readMeta(readAt(0, 4096)); ok0 {
		meta, ok = m, true
	}
	for _, ps := range []int{meta.pageSize, 4096, 8192, 16384, 65536} {
		if ps == 0 {
			continue
		}
		if m, ok1 := readMeta(readAt(int64(ps), ps)); ok1 && m.pageSize == ps && (!ok || m.txid > meta.txid) {
			meta, ok = m, true
			break
		}
	}
	if !ok {
		return found, fmt.Errorf("%w: neither meta page is valid", store.ErrCorrupt)
	}
	ps := int64(meta.pageSize)
	free := map[uint64]bool{}
	if fl := readAt(int64(meta.freelist)*ps, rawMaxSpan); meta.freelist < uint64(size/ps) && len(fl) >= rawPageHeader {
		overflow := int64(binary.LittleEndian.Uint32(fl[12:16]))
		fl = fl[:min(int64(len(fl)), (1+overflow)*ps)]
		if ids, ok := readFreelist(fl); ok {
			found.freeKnown = true
			for _, id := range ids {
				free[id] = true
			}
		}
	}
	// Pages at or past the high-water mark were never handed out.
	for id := uint64(2); id < meta.hwm && int64(id)*ps < size; id++ {
		if free[id] {
			continue
		}
		hdr := readAt(int64(id)*ps, rawPageHeader)
		if len(hdr) < rawPageHeader {
			break
		}
		flags := binary.LittleEndian.Uint16(hdr[8:10])
		overflow := int64(binary.LittleEndian.Uint32(hdr[12:16]))
		span := (1 + overflow) * ps
		if binary.LittleEndian.Uint64(hdr[0:8]) != id || span > rawMaxSpan {
			// Pages in use start with their own id; the continuation of
			// an overflowing page was skipped with its head below.
			found.damaged = append(found.damaged, id)
			continue
		}
		switch flags {
		case rawFlagLeaf:
			if !found.leaf(readAt(int64(id)*ps, int(span)), "", 0) {
				found.damaged = append(found.damaged, id)
			}
		case rawFlagBranch, rawFlagFreelist, rawFlagMeta:
		default:
			found.damaged = append(found.damaged, id)
		}
		id += uint64(overflow)
	}
	return found, nil
}

// readFreelist returns the page ids of a freelist page.
func readFreelist(b []byte) ([]uint64, bool) {
	if len(b) < rawPageHeader || binary.LittleEndian.Uint16(b[8:10]) != rawFlagFreelist {
		return nil, false
	}
	n, at := uint64(binary.LittleEndian.Uint16(b[10:12])), rawPageHeader
	if n == 0xFFFF {
		if len(b) < rawPageHeader+8 {
			return nil, false
		}
		n, at = binary.LittleEndian.Uint64(b[rawPageHeader:]), rawPageHeader+8
	}
	if n > uint64(len(b)-at)/8 {
		return nil, false
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = binary.LittleEndian.Uint64(b[at+8*i:])
	}
	return ids, true
}

// leaf collects the records of the leaf page p (header included). ns is
// the namespace of an inline bucket's page ("" at the top: a memory record
// names its own). It reports whether every element was in bounds.
func (fd *rawFound) leaf(p []byte, ns string, depth int) bool {
	if len(p) < rawPageHeader || depth > 4 {
		return false
	}
	count := int(binary.LittleEndian.Uint16(p[10:12]))
	if rawPageHeader+count*rawLeafElement > len(p) {
		return false
	}
	intact := true
	for i := range count {
		at := rawPageHeader + i*rawLeafElement
		e := p[at : at+rawLeafElement]
		flags := binary.LittleEndian.Uint32(e[0:4])
		pos, ks, vs := uint64(binary.LittleEndian.Uint32(e[4:8])), uint64(binary.LittleEndian.Uint32(e[8:12])), uint64(binary.LittleEndian.Uint32(e[12:16]))
		start := uint64(at) + pos
		if start+ks+vs > uint64(len(p)) {
			intact = false
			continue
		}
		k, v := p[start:start+ks], p[start+ks:start+ks+vs]
		if flags&rawBucketLeaf != 0 {
			// An inline bucket (a small namespace) carries its page.
			if len(v) > 16 && binary.LittleEndian.Uint64(v[0:8]) == 0 {
				intact = fd.leaf(v[16:], string(k), depth+1) && intact
			}
			continue
		}
		fd.record(k, v, ns)
	}
	return intact
}

// record keeps k → v when v is an intact memory or vector record.
func (fd *rawFound) record(k, v []byte, ns string) {
	if len(v) == 0 {
		return
	}
	id := string(k)
	switch v[0] {
	case memMagic:
		payload, err := memPayload(v)
		if err != nil {
			return
		}
		m, err := store.DecodeMemory(payload)
		if err != nil || m.ID != id || (ns != "" && m.Namespace != ns) || m.Validate() != nil {
			return
		}
		key := nsID{m.Namespace, m.ID}
		if _, dup := fd.mems[key]; !dup {
			fd.mems[key] = m
		}
	case vecMagic:
		vec, err := decodeVector(v)
		switch {
		case err != nil:
		case ns != "":
			fd.nsVecs[nsID{ns, id}] = vec
		default:
			fd.vecs[id] = append(fd.vecs[id], vec)
		}
	}
}

// vector is the intact vector of key k: its inline bucket's, or the only
// one scanned under its ID.
func (fd *rawFound) vector(k nsID) []float32 {
	if v, ok := fd.nsVecs[k]; ok {
		return v
	}
	if vs := fd.vecs[k.id]; len(vs) == 1 {
		return vs[0]
	}
	return nil
}

// checkPages checks the page structure of the file at path without bbolt
// (whose own Tx.Check runs in a goroutine of its own, where a damaged
// page's panic or fault cannot be recovered): from the newer meta page's
// root, every page reached once, in range, with its own id in its header,
// a known kind, elements in bounds and keys in order; and every page below
// the high-water mark either reached or free, never both.
func checkPages(path string) []error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return []error{err}
	}
	var meta rawMeta
	ok := false
	for _, off := range []int{0, 4096, 8192, 16384, 65536} {
		if off >= len(raw) {
			break
		}
		if m, ok1 := readMeta(raw[off:]); ok1 && (off == 0 || m.pageSize == off) && (!ok || m.txid > meta.txid) {
			meta, ok = m, true
		}
	}
	if !ok {
		return []error{fmt.Errorf("%w: neither meta page is valid", store.ErrCorrupt)}
	}
	ps := uint64(meta.pageSize)
	npages := min(meta.hwm, uint64(len(raw))/ps)
	var probs []error
	bad := func(format string, a ...any) {
		if len(probs) < 1000 {
			probs = append(probs, fmt.Errorf("%w: "+format, append([]any{store.ErrCorrupt}, a...)...))
		}
	}
	seen := map[uint64]bool{}
	// page returns page id with its overflow, marking it seen.
	page := func(id uint64, from string) []byte {
		if id < 2 || id >= npages {
			bad("page %d (from %s) is outside the file's %d pages", id, from, npages)
			return nil
		}
		if seen[id] {
			bad("page %d (from %s) is reached twice", id, from)
			return nil
		}
		p := raw[id*ps:]
		overflow := uint64(binary.LittleEndian.Uint32(p[12:16]))
		if binary.LittleEndian.Uint64(p[0:8]) != id || id+overflow >= npages {
			bad("page %d (from %s) has a damaged header", id, from)
			seen[id] = true
			return nil
		}
		for i := id; i <= id+overflow; i++ {
			seen[i] = true
		}
		return p[:(1+overflow)*ps]
	}
	if p := page(meta.freelist, "meta"); p != nil {
		ids, ok := readFreelist(p)
		if !ok {
			bad("freelist page %d is damaged", meta.freelist)
		}
		for _, id := range ids {
			if seen[id] {
				bad("page %d is both free and in use", id)
			}
			seen[id] = true
		}
	}
	var walk func(id uint64, depth int)
	var leaf func(p []byte, where string, depth int)
	leaf = func(p []byte, where string, depth int) {
		count := int(binary.LittleEndian.Uint16(p[10:12]))
		if rawPageHeader+count*rawLeafElement > len(p) {
			bad("%s: %d elements do not fit the page", where, count)
			return
		}
		var prev []byte
		for i := range count {
			at := rawPageHeader + i*rawLeafElement
			e := p[at : at+rawLeafElement]
			pos, ks, vs := uint64(binary.LittleEndian.Uint32(e[4:8])), uint64(binary.LittleEndian.Uint32(e[8:12])), uint64(binary.LittleEndian.Uint32(e[12:16]))
			start := uint64(at) + pos
			if start+ks+vs > uint64(len(p)) {
				bad("%s: element %d points outside the page", where, i)
				continue
			}
			k, v := p[start:start+ks], p[start+ks:start+ks+vs]
			if i > 0 && string(k) <= string(prev) {
				bad("%s: keys out of order at element %d", where, i)
			}
			prev = k
			if binary.LittleEndian.Uint32(e[0:4])&rawBucketLeaf == 0 {
				continue
			}
			if len(v) < 16 {
				bad("%s: bucket %q has a short header", where, k)
				continue
			}
			switch root := binary.LittleEndian.Uint64(v[0:8]); {
			case root != 0:
				walk(root, depth+1)
			case len(v) < 16+rawPageHeader || depth > 8:
				bad("%s: inline bucket %q is damaged", where, k)
			default:
				leaf(v[16:], fmt.Sprintf("inline bucket %q", k), depth+1)
			}
		}
	}
	walk = func(id uint64, depth int) {
		p := page(id, "its parent")
		if p == nil {
			return
		}
		where := fmt.Sprintf("page %d", id)
		switch binary.LittleEndian.Uint16(p[8:10]) {
		case rawFlagLeaf:
			leaf(p, where, depth)
		case rawFlagBranch:
			count := int(binary.LittleEndian.Uint16(p[10:12]))
			if rawPageHeader+count*16 > len(p) || count == 0 {
				bad("%s: %d branch elements do not fit the page", where, count)
				return
			}
			for i := range count {
				at := rawPageHeader + i*16
				e := p[at : at+16]
				if uint64(at)+uint64(binary.LittleEndian.Uint32(e[0:4]))+uint64(binary.LittleEndian.Uint32(e[4:8])) > uint64(len(p)) {
					bad("%s: branch element %d points outside the page", where, i)
					continue
				}
				walk(binary.LittleEndian.Uint64(e[8:16]), depth)
			}
		default:
			bad("%s: not a branch or leaf page (flags %#x)", where, binary.LittleEndian.Uint16(p[8:10]))
		}
	}
	root := binary.LittleEndian.Uint64(raw[rawPageHeader+16:])
	if meta.pageSize != 0 {
		// The newer meta's root; page 0's fields were read above only for
		// its txid, so read the root of the one chosen.
		for _, off := range []uint64{0, ps} {
			if m, ok := readMeta(raw[off:]); ok && m.txid == meta.txid {
				root = binary.LittleEndian.Uint64(raw[off+rawPageHeader+16:])
			}
		}
	}
	walk(root, 0)
	for id := uint64(2); id < npages; id++ {
		if !seen[id] {
			bad("page %d is neither reachable nor free", id)
		}
	}
	return probs
}
