package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const lockSHA = "ba4f88f73dbc3ae9055f3c20f4523bfdbaf1ad13ff95e258924f77d20b4fbedf"

func TestParseLock(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Package
		errs     []string // each must appear in the error
	}{
		{"good", "# comment\n\nlibc6 2.36-9+deb12u14 amd64 " + lockSHA + "\ntzdata 1:2026f all " + lockSHA + "\n",
			[]Package{{"libc6", "2.36-9+deb12u14", "amd64", lockSHA}, {"tzdata", "1:2026f", "all", lockSHA}}, nil},
		{"empty", "# nothing\n", nil, []string{"no packages"}},
		{"every problem", "libc6 1 amd64\nLibc 1 amd64 " + lockSHA + "\nx1 1 arm64 " + lockSHA + "\nx2 1 all ABC\nx3 1 all " + lockSHA + "\nx3 2 all " + lockSHA + "\nx4 1^ all " + lockSHA + "\n",
			nil, []string{"line 1: want", "line 2: \"Libc\"", "line 3: architecture", "line 4: \"ABC\"", "line 6: x3 is pinned again (line 5)", "line 7: \"1^\""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLock(strings.NewReader(tc.in))
			if len(tc.errs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; got %v", got)
			}
			for _, e := range tc.errs {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("error %q lacks %q", err, e)
				}
			}
		})
	}
	if got := (Package{Name: "a", Version: "1:2", Arch: "all"}).FileName(); got != "a_1%3a2_all.deb" {
		t.Errorf("FileName = %s", got)
	}
}

// TestPinnedLock: the committed lock parses and pins the packages the
// base layer needs.
func TestPinnedLock(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "packaging", "debian.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	pkgs, err := ParseLock(f)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pkgs {
		names = append(names, p.Name)
	}
	for _, want := range []string{"libc6", "libstdc++6", "libgcc-s1", "ca-certificates", "tzdata"} {
		if !slices.Contains(names, want) {
			t.Errorf("packaging/debian.lock does not pin %s", want)
		}
	}
}

func FuzzParseLock(f *testing.F) {
	f.Add("libc6 2.36 amd64 " + lockSHA + "\n")
	f.Add("# c\n\n a b c d e\n")
	f.Fuzz(func(t *testing.T, in string) {
		pkgs, err := ParseLock(strings.NewReader(in))
		if err == nil && len(pkgs) == 0 {
			t.Fatal("no error and no packages")
		}
		for _, p := range pkgs {
			if strings.ContainsAny(p.FileName(), "/ \n") {
				t.Fatalf("file name %q", p.FileName())
			}
		}
	})
}

// fakeDeb is a .deb (ar archive) holding data.tar.gz with files.
func fakeDeb(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var data bytes.Buffer
	zw := gzip.NewWriter(&data)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	must(t, tw.WriteHeader(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}))
	for _, n := range names {
		body := files[n]
		switch {
		case strings.HasPrefix(body, "->"):
			must(t, tw.WriteHeader(&tar.Header{Name: "./" + n, Typeflag: tar.TypeSymlink, Linkname: body[2:]}))
		case strings.HasPrefix(body, "=>"):
			must(t, tw.WriteHeader(&tar.Header{Name: "./" + n, Typeflag: tar.TypeLink, Linkname: "./" + body[2:]}))
		default:
			must(t, tw.WriteHeader(&tar.Header{Name: "./" + n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body)), Uname: "root"}))
			_, err := tw.Write([]byte(body))
			must(t, err)
		}
	}
	must(t, tw.Close())
	must(t, zw.Close())
	var ar bytes.Buffer
	ar.WriteString("!<arch>\n")
	for _, m := range []struct {
		name string
		body []byte
	}{{"debian-binary", []byte("2.0\n")}, {"control.tar.gz", []byte("x")}, {"data.tar.gz", data.Bytes()}} {
		fmt.Fprintf(&ar, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", m.name, 0, 0, 0, "100644", len(m.body))
		ar.Write(m.body)
		if len(m.body)%2 == 1 {
			ar.WriteByte('\n')
		}
	}
	return ar.Bytes()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// writeDeb writes a fake .deb and returns its path and pin.
func writeDeb(t *testing.T, name string, files map[string]string) (string, Package) {
	t.Helper()
	raw := fakeDeb(t, files)
	sum := sha256.Sum256(raw)
	p := Package{Name: name, Version: "1.0", Arch: "all", SHA256: hex.EncodeToString(sum[:])}
	file := filepath.Join(t.TempDir(), p.FileName())
	must(t, os.WriteFile(file, raw, 0o644))
	return file, p
}

func TestReadDeb(t *testing.T) {
	file, p := writeDeb(t, "pkg", map[string]string{"lib/a.so": "ELF", "lib/b.so": "->a.so"})
	files, err := ReadDeb(file, p)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]File{}
	for _, f := range files {
		got[f.Path] = f
	}
	if f := got["lib/a.so"]; f.Type != tar.TypeReg || string(f.Data) != "ELF" || f.Mode != 0o644 {
		t.Errorf("lib/a.so: %+v", f)
	}
	if f := got["lib/b.so"]; f.Type != tar.TypeSymlink || f.Link != "a.so" {
		t.Errorf("lib/b.so: %+v", f)
	}
	if _, ok := got["."]; ok {
		t.Error("the archive's ./ came through")
	}
	bad := p
	bad.SHA256 = lockSHA
	if _, err := ReadDeb(file, bad); err == nil || !strings.Contains(err.Error(), "the lock pins") {
		t.Errorf("checksum mismatch: %v", err)
	}
	if _, err := ReadDeb(filepath.Join(t.TempDir(), "none.deb"), p); err == nil || !strings.Contains(err.Error(), "setup_image.sh") {
		t.Errorf("missing file: %v", err)
	}
	notDeb := filepath.Join(t.TempDir(), "x.deb")
	must(t, os.WriteFile(notDeb, []byte("hello"), 0o644))
	sum := sha256.Sum256([]byte("hello"))
	if _, err := ReadDeb(notDeb, Package{Name: "x", SHA256: hex.EncodeToString(sum[:])}); err == nil || !strings.Contains(err.Error(), "not a .deb") {
		t.Errorf("not a deb: %v", err)
	}
}

var testUser = User{Name: "rerankd", UID: 65532, GID: 65532, Home: "/data"}

func TestBaseTree(t *testing.T) {
	files := []File{
		{Path: "lib/x86_64-linux-gnu/libc.so.6", Type: tar.TypeReg, Mode: 0o755, Data: []byte("libc")},
		{Path: "usr/lib/x86_64-linux-gnu/gconv/BIG5.so", Type: tar.TypeReg, Data: []byte("iconv")},
		{Path: "usr/share/doc/libc6/copyright", Type: tar.TypeReg, Data: []byte("LGPL")},
		{Path: "usr/share/doc/libc6/NEWS.gz", Type: tar.TypeReg, Data: []byte("news")},
		{Path: "usr/share/doc/libstdc++6", Type: tar.TypeSymlink, Link: "gcc-12-base"},
		{Path: "usr/sbin/update-ca-certificates", Type: tar.TypeReg, Data: []byte("#!/bin/sh")},
		{Path: "usr/share/ca-certificates/mozilla/B.crt", Type: tar.TypeReg, Data: []byte("B")},
		{Path: "usr/share/ca-certificates/mozilla/A.crt", Type: tar.TypeReg, Data: []byte("A\n")},
		{Path: "usr/share/zoneinfo/UTC", Type: tar.TypeReg, Data: []byte("TZif")},
	}
	tree, err := BaseTree([][]File{files}, testUser)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		"lib/x86_64-linux-gnu/libc.so.6": true, "usr/share/doc/libc6/copyright": true, "usr/share/doc/libstdc++6": true,
		"usr/share/zoneinfo/UTC": true, "usr/lib/x86_64-linux-gnu/gconv/BIG5.so": false, "usr/share/doc/libc6/NEWS.gz": false,
		"usr/sbin/update-ca-certificates": false,
	} {
		if got := tree.Get(p) != nil; got != want {
			t.Errorf("%s kept %v, want %v", p, got, want)
		}
	}
	if b := string(tree.Get(CABundle).Data); b != "A\nB\n" {
		t.Errorf("bundle %q, want the certificates in path order, each ending in a newline", b)
	}
	if pw := string(tree.Get("etc/passwd").Data); !strings.Contains(pw, "rerankd:x:65532:65532:rerankd:/data:") {
		t.Errorf("passwd %q", pw)
	}
	if d := tree.Get("data"); d == nil || d.UID != 65532 || d.Type != tar.TypeDir {
		t.Errorf("home %+v", d)
	}
	if d := tree.Get("tmp"); d == nil || d.Mode != 0o1777 {
		t.Errorf("tmp %+v", d)
	}
	_, err = BaseTree([][]File{append(slices.Clone(files), File{Path: "lib/l", Type: tar.TypeLink, Link: "usr/share/doc/libc6/NEWS.gz"})}, testUser)
	if err == nil || !strings.Contains(err.Error(), "drops") {
		t.Errorf("a hard link to a dropped file: %v", err)
	}
	if _, err := BaseTree([][]File{files[:1]}, testUser); err == nil || !strings.Contains(err.Error(), "ca-certificates") {
		t.Errorf("no certificates: %v", err)
	}
}

func TestTreeWriteTar(t *testing.T) {
	tree := NewTree()
	must(t, tree.AddData("b/f", 0o644, []byte("x")))
	must(t, tree.Add(File{Path: "./a/link", Type: tar.TypeSymlink, Link: "../b/f"}))
	must(t, tree.Add(File{Path: "a/hard", Type: tar.TypeLink, Link: "b/f"}))
	if err := tree.AddData("../escape", 0o644, nil); err == nil {
		t.Error("a path leaving the tree was accepted")
	}
	var buf bytes.Buffer
	mtime := time.Unix(1700000000, 5e8)
	must(t, tree.WriteTar(&buf, "top", mtime))
	tr := tar.NewReader(&buf)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		must(t, err)
		names = append(names, h.Name)
		if !h.ModTime.Equal(time.Unix(1700000000, 0)) || h.Uname != "" || h.Uid != 0 {
			t.Errorf("%s: mtime %v uname %q uid %d", h.Name, h.ModTime, h.Uname, h.Uid)
		}
		if h.Name == "top/a/hard" && h.Linkname != "top/b/f" {
			t.Errorf("hard link to %s", h.Linkname)
		}
	}
	want := []string{"top/", "top/a/", "top/a/hard", "top/a/link", "top/b/", "top/b/f"}
	if !slices.Equal(names, want) {
		t.Errorf("entries %v, want %v", names, want)
	}
}

// testApp is an App of small files.
func testApp(t *testing.T) App {
	t.Helper()
	dir := t.TempDir()
	for p, body := range map[string]string{"bin/rerankd": "R", "bin/eval": "E", "ort.so": "ORT", "tok/tokenizer.json": "{}", "lic/LICENSE": "MIT"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644))
	}
	return App{Binaries: map[string]string{"rerankd": filepath.Join(dir, "bin/rerankd"), "eval": filepath.Join(dir, "bin/eval")},
		ORTLib: filepath.Join(dir, "ort.so"), ORTLibName: "libonnxruntime.so.1", Tokenizer: filepath.Join(dir, "tok"),
		TokenizerDir: "tokenizers/qwen3", Licenses: filepath.Join(dir, "lic")}
}

func TestAppValidate(t *testing.T) {
	a := testApp(t)
	must(t, a.Validate())
	a.Binaries["bad/name"] = "/nonexistent"
	a.ORTLib = ""
	a.Licenses = a.Tokenizer + "/tokenizer.json"
	err := a.Validate()
	for _, want := range []string{`"bad/name"`, "/nonexistent", "ONNX Runtime library: no path", "not a folder"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestDist(t *testing.T) {
	a := testApp(t)
	readme := filepath.Join(t.TempDir(), "README.md")
	must(t, os.WriteFile(readme, []byte("run it"), 0o644))
	o := DistOptions{Folder: "rerankd-v1-linux-amd64", Readme: readme, Time: time.Unix(1700000000, 0)}
	tree, err := DistTree(a, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"README.md", "SHA256SUMS", "eval", "libonnxruntime.so.1", "licenses/LICENSE", "rerankd", "tokenizers/qwen3/tokenizer.json"}
	if got := tree.Paths(); !slices.Equal(got, want) {
		t.Errorf("paths %v, want %v", got, want)
	}
	sums := string(tree.Get("SHA256SUMS").Data)
	ort := sha256.Sum256([]byte("ORT"))
	if !strings.Contains(sums, hex.EncodeToString(ort[:])+"  libonnxruntime.so.1\n") || strings.Contains(sums, "SHA256SUMS") || strings.Count(sums, "\n") != 6 {
		t.Errorf("SHA256SUMS:\n%s", sums)
	}
	if tree.Get("rerankd").Mode != 0o755 {
		t.Error("rerankd is not executable")
	}
	dir := t.TempDir()
	f1, f2 := filepath.Join(dir, "1.tar.gz"), filepath.Join(dir, "2.tar.gz")
	must(t, WriteDist(f1, tree, o))
	tree2, err := DistTree(a, o)
	must(t, err)
	must(t, WriteDist(f2, tree2, o))
	b1, _ := os.ReadFile(f1)
	b2, _ := os.ReadFile(f2)
	if len(b1) == 0 || !bytes.Equal(b1, b2) {
		t.Error("two writes of one release archive differ")
	}
}

func testImage(t *testing.T, a App) (ImageConfig, []LayerSpec) {
	t.Helper()
	c := DefaultImageConfig()
	c.Version, c.Revision, c.Created, c.Licenses = "v1", "abc", time.Unix(1700000000, 0), "MIT"
	c.Packages = []Package{{"libc6", "2.36", "amd64", lockSHA}}
	base := NewTree()
	must(t, base.AddData("etc/passwd", 0o644, []byte("root:x:0:0::/:/x\n")))
	rt, bins := NewTree(), NewTree()
	must(t, a.AddRuntime(rt, c.Root))
	must(t, a.AddBinaries(bins, c.Root))
	return c, []LayerSpec{{base, "base"}, {rt, "runtime"}, {bins, "binaries"}}
}

// TestImageArchive: the conventions are in the config; two builds give
// the same digest and archive bytes; the archive reads back both as a
// docker-archive and as an OCI layout, with the same layers.
func TestImageArchive(t *testing.T) {
	a := testApp(t)
	c, layers := testImage(t, a)
	img, err := BuildImage(c, layers)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	must(t, err)
	cc := cf.Config
	if cc.User != "65532:65532" || !slices.Equal(cc.Entrypoint, []string{"/opt/rerankd/rerankd"}) || !slices.Equal(cc.Cmd, []string{"serve"}) ||
		cc.WorkingDir != "/data" || cc.StopSignal != "SIGTERM" {
		t.Errorf("config %+v", cc)
	}
	if _, ok := cc.Volumes["/data"]; !ok {
		t.Error("no /data volume")
	}
	if _, ok := cc.ExposedPorts["8080/tcp"]; !ok {
		t.Error("port 8080 not exposed")
	}
	for _, e := range []string{"RERANKD_ADDR=0.0.0.0:8080", "RERANKD_DATA=/data", "RERANKD_CACHE=/data/cache"} {
		if !slices.Contains(cc.Env, e) {
			t.Errorf("env %v lacks %s", cc.Env, e)
		}
	}
	for k, v := range map[string]string{"org.opencontainers.image.revision": "abc", "org.opencontainers.image.version": "v1",
		"org.opencontainers.image.licenses": "MIT", "org.opencontainers.image.created": "2023-11-14T22:13:20Z", "io.rerankd.base.debian-packages": "libc6=2.36"} {
		if cc.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, cc.Labels[k], v)
		}
	}
	if len(cf.History) != 3 || cf.History[2].Comment != "binaries" || !cf.Created.Equal(c.Created) {
		t.Errorf("history %+v created %v", cf.History, cf.Created)
	}
	dir := t.TempDir()
	f1, f2 := filepath.Join(dir, "1.tar"), filepath.Join(dir, "2.tar")
	d1, err := WriteArchive(f1, img, c)
	must(t, err)
	c2, layers2 := testImage(t, a)
	img2, err := BuildImage(c2, layers2)
	must(t, err)
	d2, err := WriteArchive(f2, img2, c2)
	must(t, err)
	b1, _ := os.ReadFile(f1)
	b2, _ := os.ReadFile(f2)
	if d1 != d2 || !bytes.Equal(b1, b2) {
		t.Errorf("two builds differ: %s %s", d1, d2)
	}

	// As a docker-archive (manifest.json).
	dimg, err := tarball.ImageFromPath(f1, nil)
	must(t, err)
	dl, err := dimg.Layers()
	must(t, err)
	ol, err := img.Layers()
	must(t, err)
	if len(dl) != len(ol) {
		t.Fatalf("docker-archive has %d layers, want %d", len(dl), len(ol))
	}
	for i := range dl {
		x, _ := dl[i].DiffID()
		y, _ := ol[i].DiffID()
		if x != y {
			t.Errorf("layer %d: diff id %s, want %s", i, x, y)
		}
	}
	dcn, _ := dimg.ConfigName()
	ocn, _ := img.ConfigName()
	if dcn != ocn {
		t.Errorf("docker-archive config %s, want %s", dcn, ocn)
	}

	// As an OCI layout (index.json).
	lay := t.TempDir()
	untar(t, f1, lay)
	idx, err := layout.ImageIndexFromPath(lay)
	must(t, err)
	im, err := idx.IndexManifest()
	must(t, err)
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != d1 || im.Manifests[0].Annotations["io.containerd.image.name"] != "docker.io/library/rerankd:v1" {
		t.Errorf("index %+v, want the image %s", im.Manifests, d1)
	}
	limg, err := idx.Image(d1)
	must(t, err)
	if ld, _ := limg.Digest(); ld != d1 {
		t.Errorf("layout image digest %s, want %s", ld, d1)
	}

	bad := c
	bad.Version, bad.Created, bad.User.UID = "", time.Time{}, 0
	if _, err := BuildImage(bad, layers); err == nil || !strings.Contains(err.Error(), "version") || !strings.Contains(err.Error(), "created") || !strings.Contains(err.Error(), "non-root") {
		t.Errorf("bad config: %v", err)
	}
}

// untar unpacks a plain archive of regular files into dir.
func untar(t *testing.T, file, dir string) {
	t.Helper()
	f, err := os.Open(file)
	must(t, err)
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		must(t, err)
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			must(t, os.MkdirAll(p, 0o755))
			continue
		}
		b, err := io.ReadAll(tr)
		must(t, err)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, b, 0o644))
	}
}

// FuzzDataMember: the .deb (ar) reader never panics or reads past its
// input, whatever the bytes.
func FuzzDataMember(f *testing.F) {
	f.Add([]byte("!<arch>\n"))
	f.Add([]byte("!<arch>\ndata.tar.gz     0           0     0     100644  3         `\nabc\n"))
	f.Add([]byte("!<arch>\ndata.tar.gz     0           0     0     100644  -1        `\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		name, body, err := dataMember(raw)
		if err == nil && (!strings.HasPrefix(name, "data.tar") || len(body) > len(raw)) {
			t.Fatalf("member %q of %d bytes from %d bytes", name, len(body), len(raw))
		}
	})
}
