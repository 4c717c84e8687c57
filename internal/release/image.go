package release

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/rerankd/rerankd/internal/atomicfile"
)

// ImageConfig is the image's run-time settings and metadata.
type ImageConfig struct {
	// Name is the repository the archive tags (rerankd).
	Name string
	// Version tags the image and labels it; Revision is the commit;
	// Source the project's address.
	Version, Revision, Source string
	// Created stamps the image, its history and (by the caller) every
	// layer entry: the commit's time, so rebuilds give the same digest.
	Created time.Time
	// User runs the entry point; its home is the data volume.
	User User
	// Root is the folder of the binaries, library and tokenizer.
	Root string
	// Addr is where serve listens inside the container (RERANKD_ADDR).
	Addr string
	// Licenses is the SPDX expression of what the image bundles.
	Licenses string
	// Packages are the base layer's Debian packages, listed in a label.
	Packages []Package
	// Labels are added to the standard ones.
	Labels map[string]string
}

// DefaultImageConfig is rerankd's image: user rerankd (65532) with the
// /data volume as its home, binaries in /opt/rerankd, serve on
// 0.0.0.0:8080.
func DefaultImageConfig() ImageConfig {
	return ImageConfig{
		Name:   "rerankd",
		Source: "https://github.com/rerankd/rerankd",
		User:   User{Name: "rerankd", UID: 65532, GID: 65532, Home: "/data"},
		Root:   "/opt/rerankd",
		Addr:   "0.0.0.0:8080",
	}
}

// Validate reports every problem at once.
func (c ImageConfig) Validate() error {
	var errs []error
	if c.Name == "" || strings.ContainsAny(c.Name, ":@ ") {
		errs = append(errs, fmt.Errorf("name %q: want a repository name", c.Name))
	}
	if c.Version == "" || strings.ContainsAny(c.Version, ":@/ ") {
		errs = append(errs, fmt.Errorf("version %q: want a tag", c.Version))
	}
	if c.Created.IsZero() {
		errs = append(errs, errors.New("created time unset (use the commit's time)"))
	}
	if c.User.UID <= 0 || c.User.GID <= 0 || c.User.Name == "" {
		errs = append(errs, fmt.Errorf("user %+v: want a named non-root user", c.User))
	}
	if !path.IsAbs(c.User.Home) || !path.IsAbs(c.Root) {
		errs = append(errs, fmt.Errorf("home %q and root %q must be absolute", c.User.Home, c.Root))
	}
	if !strings.Contains(c.Addr, ":") {
		errs = append(errs, fmt.Errorf("addr %q: want host:port", c.Addr))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("release: image: %w", err)
	}
	return nil
}

// Env is the container's environment: serve's address, the data and
// cache folders on the volume (memories, converted models, hub
// downloads, session caches), and PATH to the binaries.
func (c ImageConfig) Env() []string {
	return []string{
		"PATH=" + c.Root + ":/usr/bin:/bin",
		"HOME=" + c.User.Home,
		"RERANKD_ADDR=" + c.Addr,
		"RERANKD_DATA=" + c.User.Home,
		"RERANKD_CACHE=" + path.Join(c.User.Home, "cache"),
	}
}

// port is Addr's port.
func (c ImageConfig) port() string { return c.Addr[strings.LastIndex(c.Addr, ":")+1:] }

// LayerSpec is one layer: its files and the history line saying what
// they are.
type LayerSpec struct {
	Tree    *Tree
	Comment string
}

// BuildImage assembles an OCI image (OCI media types) from the layers, in
// order, with c's configuration: entry point Root/rerankd, command serve.
func BuildImage(c ImageConfig, layers []LayerSpec) (v1.Image, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	created := v1.Time{Time: c.Created.UTC().Truncate(time.Second)}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, ls := range layers {
		// Compressed here, once: given the tar, the layer would compress
		// it again for its digest, its size and the archive. The opener's
		// gzip magic tells tarball the bytes are compressed.
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return nil, err
		}
		if err := ls.Tree.WriteTar(zw, "", c.Created); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		data := buf.Bytes()
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
			tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, fmt.Errorf("release: layer %q: %w", ls.Comment, err)
		}
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
			History: v1.History{Created: created, CreatedBy: "rerankd mkrelease", Comment: ls.Comment}})
		if err != nil {
			return nil, fmt.Errorf("release: layer %q: %w", ls.Comment, err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Author = c.Source
	cf.Config = v1.Config{
		User:         fmt.Sprintf("%d:%d", c.User.UID, c.User.GID),
		Env:          c.Env(),
		Entrypoint:   []string{path.Join(c.Root, "rerankd")},
		Cmd:          []string{"serve"},
		WorkingDir:   c.User.Home,
		Volumes:      map[string]struct{}{c.User.Home: {}},
		ExposedPorts: map[string]struct{}{c.port() + "/tcp": {}},
		StopSignal:   "SIGTERM",
		Labels:       c.labels(),
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	if img, err = mutate.CreatedAt(img, created); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	return img, nil
}

// labels are the OCI annotations' keys as image labels, the base
// layer's packages, and c.Labels.
func (c ImageConfig) labels() map[string]string {
	pkgs := make([]string, len(c.Packages))
	for i, p := range c.Packages {
		pkgs[i] = p.String()
	}
	l := map[string]string{
		"org.opencontainers.image.title":         c.Name,
		"org.opencontainers.image.description":   "rerankd: reranks an AI agent's long-term memories (HTTP API on port " + c.port() + ", data in " + c.User.Home + ")",
		"org.opencontainers.image.source":        c.Source,
		"org.opencontainers.image.url":           c.Source,
		"org.opencontainers.image.documentation": c.Source + "/blob/main/docs/user/install.md",
		"org.opencontainers.image.version":       c.Version,
		"org.opencontainers.image.revision":      c.Revision,
		"org.opencontainers.image.created":       c.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses":      c.Licenses,
		"io.rerankd.base.debian-packages":        strings.Join(pkgs, " "),
	}
	for k, v := range c.Labels {
		l[k] = v
	}
	for k, v := range l {
		if v == "" {
			delete(l, k)
		}
	}
	return l
}

// WriteArchive writes img to file as one tar that is both an OCI image
// layout (oci-layout, index.json, blobs/sha256/...; podman load, docker
// load from Docker 25) and a docker-archive (manifest.json naming the
// same blobs; docker load before 25), tagged c.Name:c.Version, every
// entry stamped with c.Created. It returns the image's manifest digest.
func WriteArchive(file string, img v1.Image, c ImageConfig) (v1.Hash, error) {
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("release: %w", err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(file), ".oci-layout-")
	if err != nil {
		return v1.Hash{}, fmt.Errorf("release: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("release: %w", err)
	}
	ref := c.Name + ":" + c.Version
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": c.Version,
		"io.containerd.image.name":          "docker.io/library/" + ref,
	})); err != nil {
		return v1.Hash{}, fmt.Errorf("release: %w", err)
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("release: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("release: %w", err)
	}
	blob := func(h v1.Hash) string { return path.Join("blobs", h.Algorithm, h.Hex) }
	desc := tarball.Descriptor{Config: blob(cfgName), RepoTags: []string{ref}}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return v1.Hash{}, fmt.Errorf("release: %w", err)
		}
		desc.Layers = append(desc.Layers, blob(d))
	}
	manifest, err := json.Marshal(tarball.Manifest{desc})
	if err != nil {
		return v1.Hash{}, fmt.Errorf("release: %w", err)
	}
	t := NewTree()
	if err := t.AddData("manifest.json", 0o644, manifest); err != nil {
		return v1.Hash{}, err
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		return t.AddSource(filepath.ToSlash(rel), 0o644, p)
	})
	if err != nil {
		return v1.Hash{}, fmt.Errorf("release: %w", err)
	}
	return digest, writeFile(file, func(w io.Writer) error { return t.WriteTar(w, "", c.Created) })
}

// WriteDist writes the release archive, a gzip-compressed tar of t below
// o.Folder; the gzip header carries no name or time.
func WriteDist(file string, t *Tree, o DistOptions) error {
	return writeFile(file, func(w io.Writer) error {
		zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
		if err != nil {
			return err
		}
		if err := t.WriteTar(zw, o.Folder, o.Time); err != nil {
			return err
		}
		return zw.Close()
	})
}

// writeFile writes file through a temporary file beside it, renamed into
// place once complete.
func writeFile(file string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-")
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	if err := write(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("release: %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if err := atomicfile.Rename(f.Name(), file); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}
