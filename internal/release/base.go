package release

import (
	"archive/tar"
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Dropped are the parts of the pinned packages the base layer leaves
// out: nothing rerankd, eval or ONNX Runtime loads or reads. Each entry
// is a path prefix (a folder and everything below it).
var Dropped = []string{
	"bin", "sbin", "usr/bin", "usr/sbin", // tools (update-ca-certificates, tzconfig): no shell runs them
	"usr/lib/x86_64-linux-gnu/gconv", // iconv modules: nothing here converts character sets
	"usr/share/man", "usr/share/info", "usr/share/locale", "usr/share/lintian", "usr/share/bug",
	"usr/share/gdb", "usr/share/gcc", // libstdc++'s debugger pretty-printers
	"usr/share/debconf", // installer questions
	"usr/share/doc",     // all but each package's copyright file (kept below)
}

// keep says whether a package's entry stays in the base layer: not below
// a Dropped prefix, except /usr/share/doc/PKG itself (a folder or, for
// libstdc++6 and libgcc-s1, a link to gcc-12-base's) and its copyright.
func keep(p string) bool {
	if rest, ok := strings.CutPrefix(p, "usr/share/doc/"); ok {
		parts := strings.Split(rest, "/")
		return len(parts) == 1 || (len(parts) == 2 && parts[1] == "copyright")
	}
	for _, d := range Dropped {
		if p == d || strings.HasPrefix(p, d+"/") {
			return false
		}
	}
	return true
}

// User is the image's non-root account.
type User struct {
	Name     string
	UID, GID int
	// Home is its home folder, also the data volume.
	Home string
}

// CABundle is where the base layer writes the certificate bundle (what
// update-ca-certificates would make of ca-certificates' files, and the
// first file Go's crypto/x509 reads on Linux).
const CABundle = "etc/ssl/certs/ca-certificates.crt"

// BaseTree is the base layer: the pinned packages' files (debs, one
// entry list per package, as ReadDeb returns them) less Dropped, the
// certificate bundle, /etc/passwd and /etc/group with root and u, a
// world-writable /tmp and u's home folder, owned by u.
func BaseTree(debs [][]File, u User) (*Tree, error) {
	t := NewTree()
	for _, files := range debs {
		for _, f := range files {
			if !keep(f.Path) {
				continue
			}
			if err := t.Add(f); err != nil {
				return nil, err
			}
		}
	}
	// Hard links whose target was dropped would dangle: the layer
	// refuses them rather than ship a broken file.
	for _, p := range t.Paths() {
		if f := t.Get(p); f.Type == tar.TypeLink && t.Get(f.Link) == nil {
			return nil, fmt.Errorf("release: %s links to %s, which the base layer drops", p, f.Link)
		}
	}
	var certs []string
	for _, p := range t.Paths() {
		if strings.HasPrefix(p, "usr/share/ca-certificates/") && strings.HasSuffix(p, ".crt") {
			certs = append(certs, p)
		}
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("release: no certificates under usr/share/ca-certificates (is ca-certificates pinned?)")
	}
	var bundle bytes.Buffer
	for _, p := range certs {
		b := t.Get(p).Data
		bundle.Write(b)
		if !bytes.HasSuffix(b, []byte("\n")) {
			bundle.WriteByte('\n')
		}
	}
	home := strings.TrimPrefix(path.Clean(u.Home), "/")
	for _, err := range []error{
		t.AddData(CABundle, 0o644, bundle.Bytes()),
		t.AddData("etc/passwd", 0o644, fmt.Appendf(nil, "root:x:0:0:root:/root:/usr/sbin/nologin\n%s:x:%d:%d:%s:/%s:/usr/sbin/nologin\n", u.Name, u.UID, u.GID, u.Name, home)),
		t.AddData("etc/group", 0o644, fmt.Appendf(nil, "root:x:0:\n%s:x:%d:\n", u.Name, u.GID)),
		t.AddDir("tmp", 0o1777, 0, 0),
		t.AddDir("root", 0o700, 0, 0),
		t.AddDir(home, 0o755, u.UID, u.GID),
	} {
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Contents summarises a tree for the docs: the size of its regular files
// per top two folders, largest first.
func Contents(t *Tree) []string {
	sizes := map[string]int{}
	for _, p := range t.Paths() {
		f := t.Get(p)
		if f.Type != tar.TypeReg {
			continue
		}
		parts := strings.SplitN(p, "/", 4)
		key := strings.Join(parts[:min(len(parts)-1, 3)], "/")
		if key == "" {
			key = p
		}
		n := len(f.Data)
		if f.Source != "" {
			if b, err := f.content(); err == nil {
				n = len(b)
			}
		}
		sizes[key] += n
	}
	keys := make([]string, 0, len(sizes))
	for k := range sizes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if sizes[a] != sizes[b] {
			return sizes[b] - sizes[a]
		}
		return strings.Compare(a, b)
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%9d  /%s", sizes[k], k)
	}
	return out
}
