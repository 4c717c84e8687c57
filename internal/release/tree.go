// Package release assembles rerankd's release artefacts without a
// container daemon or registry: the OCI image archive (loadable by
// `docker load` and `podman load`) whose base layer is unpacked from
// pinned Debian packages, and the linux/amd64 release archive. Every
// output is reproducible: entries sorted, owners and modification times
// fixed (the commit's time), so two builds of one commit from the same
// inputs are byte for byte the same. The image format is
// go-containerregistry's; this package only lays out the files.
package release

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// File is one entry of a Tree. Exactly one of Data, Source or Link is
// used, by Type.
type File struct {
	// Path is slash-separated, relative, without "./" (usr/lib/x).
	Path string
	// Type is tar.TypeReg, tar.TypeDir, tar.TypeSymlink or tar.TypeLink.
	Type byte
	// Mode holds the permission bits (setuid/sticky included).
	Mode int64
	// UID and GID own the entry.
	UID, GID int
	// Data is a regular file's content when Source is "".
	Data []byte
	// Source is a file on disk read for the content at write time.
	Source string
	// Link is a symlink's target or a hard link's path in the tree.
	Link string
}

// Tree is a file system being assembled for one layer or archive.
// Parents missing when it is written are added as root-owned 0755
// folders.
type Tree struct {
	files map[string]*File
}

// NewTree is an empty tree.
func NewTree() *Tree { return &Tree{files: map[string]*File{}} }

// Add puts f in the tree, replacing an entry at the same path. Paths
// are cleaned and taken relative to the tree's root ("/opt/x" is
// "opt/x"); one leaving the tree is an error.
func (t *Tree) Add(f File) error {
	p := path.Clean(strings.TrimLeft(strings.TrimPrefix(f.Path, "./"), "/"))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("release: path %q is outside the tree", f.Path)
	}
	f.Path = p
	t.files[p] = &f
	return nil
}

// AddData adds a root-owned regular file with content data.
func (t *Tree) AddData(p string, mode int64, data []byte) error {
	return t.Add(File{Path: p, Type: tar.TypeReg, Mode: mode, Data: data})
}

// AddSource adds a root-owned regular file read from src when written.
func (t *Tree) AddSource(p string, mode int64, src string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return t.Add(File{Path: p, Type: tar.TypeReg, Mode: mode, Source: src})
}

// AddDir adds a folder owned by uid:gid.
func (t *Tree) AddDir(p string, mode int64, uid, gid int) error {
	return t.Add(File{Path: p, Type: tar.TypeDir, Mode: mode, UID: uid, GID: gid})
}

// Get is the entry at p, or nil.
func (t *Tree) Get(p string) *File { return t.files[path.Clean(p)] }

// Paths lists the entries' paths, sorted, parents not added.
func (t *Tree) Paths() []string {
	ps := make([]string, 0, len(t.files))
	for p := range t.files {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// entries are the tree's files with missing parents added, parents
// first, then in path order.
func (t *Tree) entries() []*File {
	all := make(map[string]*File, len(t.files))
	for p, f := range t.files {
		all[p] = f
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := t.files[d]; !ok {
				all[d] = &File{Path: d, Type: tar.TypeDir, Mode: 0o755}
			}
		}
	}
	out := make([]*File, 0, len(all))
	for _, f := range all {
		out = append(out, f)
	}
	// Sorting by path puts every folder before what it holds ("a" < "a/b").
	slices.SortFunc(out, func(a, b *File) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// content is a regular file's bytes.
func (f *File) content() ([]byte, error) {
	if f.Source == "" {
		return f.Data, nil
	}
	b, err := os.ReadFile(f.Source)
	if err != nil {
		return nil, fmt.Errorf("release: %s: %w", f.Path, err)
	}
	return b, nil
}

// WriteTar writes the tree as an uncompressed tar below prefix ("" or a
// folder name), every entry stamped with mtime and no user or group
// names, so the same tree gives the same bytes.
func (t *Tree) WriteTar(w io.Writer, prefix string, mtime time.Time) error {
	tw := tar.NewWriter(w)
	mtime = mtime.UTC().Truncate(time.Second)
	entries := t.entries()
	if prefix != "" {
		entries = append([]*File{{Path: ".", Type: tar.TypeDir, Mode: 0o755}}, entries...)
	}
	for _, f := range entries {
		name := f.Path
		if prefix != "" {
			name = path.Join(prefix, name)
		}
		h := &tar.Header{Name: name, Typeflag: f.Type, Mode: f.Mode, Uid: f.UID, Gid: f.GID, ModTime: mtime, Format: tar.FormatPAX}
		var data []byte
		switch f.Type {
		case tar.TypeDir:
			h.Name += "/"
		case tar.TypeSymlink:
			h.Linkname = f.Link
		case tar.TypeLink:
			h.Linkname = f.Link
			if prefix != "" {
				h.Linkname = path.Join(prefix, f.Link)
			}
		case tar.TypeReg:
			b, err := f.content()
			if err != nil {
				return err
			}
			data, h.Size = b, int64(len(b))
		default:
			return fmt.Errorf("release: %s: unsupported entry type %q", f.Path, f.Type)
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("release: %s: %w", f.Path, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("release: %s: %w", f.Path, err)
		}
	}
	return tw.Close()
}

// SHA256Sums is a sha256sum-style listing ("HEX  path\n") of the tree's
// regular files, in path order: the release archive's SHA256SUMS.
func (t *Tree) SHA256Sums() ([]byte, error) {
	var b strings.Builder
	for _, f := range t.entries() {
		if f.Type != tar.TypeReg {
			continue
		}
		data, err := f.content()
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), f.Path)
	}
	return []byte(b.String()), nil
}
