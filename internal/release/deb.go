package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ulikunitz/xz"
)

// Package is one pinned Debian package of the base layer: a line
// "name version arch sha256" of packaging/debian.lock.
type Package struct {
	Name, Version, Arch string
	// SHA256 is the .deb's, from the archive's signed index.
	SHA256 string
}

// String is name=version, apt's spelling.
func (p Package) String() string { return p.Name + "=" + p.Version }

// FileName is the .deb's name in scripts/setup_image.sh's cache folder
// (apt's own name, an epoch's ':' written %3a).
func (p Package) FileName() string {
	return p.Name + "_" + strings.ReplaceAll(p.Version, ":", "%3a") + "_" + p.Arch + ".deb"
}

var (
	debName    = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	debVersion = regexp.MustCompile(`^[0-9A-Za-z.+~:-]+$`)
	hexSHA256  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ParseLock reads packaging/debian.lock: blank lines and lines starting
// with '#' are skipped; every problem is reported with its line number.
func ParseLock(r io.Reader) ([]Package, error) {
	var pkgs []Package
	var errs []error
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			errs = append(errs, fmt.Errorf("line %d: want \"name version arch sha256\", got %d fields", n, len(f)))
			continue
		}
		p := Package{Name: f[0], Version: f[1], Arch: f[2], SHA256: f[3]}
		switch {
		case !debName.MatchString(p.Name):
			errs = append(errs, fmt.Errorf("line %d: %q is not a Debian package name", n, p.Name))
		case !debVersion.MatchString(p.Version):
			errs = append(errs, fmt.Errorf("line %d: %q is not a Debian version", n, p.Version))
		case p.Arch != "amd64" && p.Arch != "all":
			errs = append(errs, fmt.Errorf("line %d: architecture %q: want amd64 or all", n, p.Arch))
		case !hexSHA256.MatchString(p.SHA256):
			errs = append(errs, fmt.Errorf("line %d: %q is not a lower-case hex sha256", n, p.SHA256))
		case seen[p.Name] != 0:
			errs = append(errs, fmt.Errorf("line %d: %s is pinned again (line %d)", n, p.Name, seen[p.Name]))
		default:
			seen[p.Name] = n
			pkgs = append(pkgs, p)
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	if len(pkgs) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no packages"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("release: debian lock: %w", err)
	}
	return pkgs, nil
}

// ReadDeb checks the .deb at file against p's sha256 and returns the
// entries of its data archive, owned by root, paths without "./".
func ReadDeb(file string, p Package) ([]File, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("release: %s: %w (run scripts/setup_image.sh)", p, err)
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != p.SHA256 {
		return nil, fmt.Errorf("release: %s: %s has sha256 %s, the lock pins %s", p, filepath.Base(file), got, p.SHA256)
	}
	member, data, err := dataMember(raw)
	if err != nil {
		return nil, fmt.Errorf("release: %s: %w", p, err)
	}
	var zr io.Reader
	switch {
	case strings.HasSuffix(member, ".xz"):
		zr, err = xz.NewReader(bytes.NewReader(data))
	case strings.HasSuffix(member, ".gz"):
		zr, err = gzip.NewReader(bytes.NewReader(data))
	case member == "data.tar":
		zr = bytes.NewReader(data)
	default:
		err = fmt.Errorf("%s: unsupported compression", member)
	}
	if err != nil {
		return nil, fmt.Errorf("release: %s: %w", p, err)
	}
	files, err := readTar(zr)
	if err != nil {
		return nil, fmt.Errorf("release: %s: %s: %w", p, member, err)
	}
	return files, nil
}

// dataMember finds data.tar* in a .deb, an ar archive: "!<arch>\n", then
// per member a 60-byte header (name 16, then mtime, uid, gid, mode, size
// 10 in decimal, "`\n") and the content padded to an even length.
func dataMember(raw []byte) (string, []byte, error) {
	const magic = "!<arch>\n"
	if !bytes.HasPrefix(raw, []byte(magic)) {
		return "", nil, errors.New("not a .deb (no ar header)")
	}
	for off := len(magic); off+60 <= len(raw); {
		h := raw[off : off+60]
		if string(h[58:60]) != "`\n" {
			return "", nil, fmt.Errorf("bad ar member header at byte %d", off)
		}
		name := strings.TrimSuffix(strings.TrimSpace(string(h[:16])), "/")
		size, err := strconv.Atoi(strings.TrimSpace(string(h[48:58])))
		if err != nil || size < 0 || off+60+size > len(raw) {
			return "", nil, fmt.Errorf("bad ar member size at byte %d", off)
		}
		body := raw[off+60 : off+60+size]
		if strings.HasPrefix(name, "data.tar") {
			return name, body, nil
		}
		off += 60 + size + size%2
	}
	return "", nil, errors.New("no data.tar member")
}

// readTar reads a package's data archive into root-owned entries.
func readTar(r io.Reader) ([]File, error) {
	tr := tar.NewReader(r)
	var files []File
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		p := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if p == "." {
			continue
		}
		f := File{Path: p, Type: h.Typeflag, Mode: h.Mode & 0o7777}
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			if f.Data, err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		case tar.TypeSymlink:
			f.Link = h.Linkname
		case tar.TypeLink:
			f.Link = path.Clean(strings.TrimPrefix(h.Linkname, "./"))
		default:
			return nil, fmt.Errorf("%s: unsupported entry type %q", p, h.Typeflag)
		}
		files = append(files, f)
	}
}
