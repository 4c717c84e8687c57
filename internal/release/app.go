package release

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"
)

// App names the files rerankd ships, wherever they come from: the built
// binaries, the ONNX Runtime library and default tokenizer that
// scripts/setup.sh installs (checked there against their pinned
// sha256), and the licences of what is bundled.
type App struct {
	// Binaries maps each command's name (rerankd, eval, ...) to its built
	// file; they are installed under their names, in name order.
	Binaries map[string]string
	// ORTLib is the ONNX Runtime shared library, installed as ORTLibName
	// beside the binaries, where they look for it first.
	ORTLib string
	// ORTLibName is the library's name beside the binaries.
	ORTLibName string
	// Tokenizer is the default tokenizer's folder; its regular files go
	// to TokenizerDir beside the binaries.
	Tokenizer string
	// TokenizerDir is the tokenizer's folder below the binaries'.
	TokenizerDir string
	// Licenses is a folder of licence texts and notices for what is
	// bundled, installed as licenses/ beside the binaries.
	Licenses string
}

// Validate reports every missing or unset part at once.
func (a App) Validate() error {
	var errs []error
	if len(a.Binaries) == 0 {
		errs = append(errs, errors.New("no binaries"))
	}
	for name, p := range a.Binaries {
		if name == "" || path.Base(name) != name {
			errs = append(errs, fmt.Errorf("binary name %q: want a plain file name", name))
		}
		errs = append(errs, regular("binary "+name, p))
	}
	if a.ORTLibName == "" || a.TokenizerDir == "" {
		errs = append(errs, errors.New("ORTLibName and TokenizerDir must be set"))
	}
	errs = append(errs, regular("ONNX Runtime library", a.ORTLib),
		regular("tokenizer", filepath.Join(a.Tokenizer, "tokenizer.json")),
		folder("licences", a.Licenses))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

func regular(what, p string) error {
	if p == "" {
		return fmt.Errorf("%s: no path given", what)
	}
	st, err := os.Stat(p)
	if err == nil && !st.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, p, err)
	}
	return nil
}

func folder(what, p string) error {
	st, err := os.Stat(p)
	if err == nil && !st.IsDir() {
		err = errors.New("not a folder")
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, p, err)
	}
	return nil
}

// AddRuntime adds the ONNX Runtime library, the tokenizer and the
// licences below root.
func (a App) AddRuntime(t *Tree, root string) error {
	if err := t.AddSource(path.Join(root, a.ORTLibName), 0o755, a.ORTLib); err != nil {
		return err
	}
	for _, d := range []struct{ src, dst string }{{a.Tokenizer, a.TokenizerDir}, {a.Licenses, "licenses"}} {
		names, err := regularFiles(d.src)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := t.AddSource(path.Join(root, d.dst, n), 0o644, filepath.Join(d.src, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// AddBinaries adds the binaries below root, mode 0755.
func (a App) AddBinaries(t *Tree, root string) error {
	names := make([]string, 0, len(a.Binaries))
	for n := range a.Binaries {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := t.AddSource(path.Join(root, n), 0o755, a.Binaries[n]); err != nil {
			return err
		}
	}
	return nil
}

// regularFiles are the names of dir's regular files, sorted.
func regularFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// DistOptions are the release archive's settings.
type DistOptions struct {
	// Folder is the archive's one top folder (rerankd-VERSION-linux-amd64).
	Folder string
	// Readme is the README placed in it.
	Readme string
	// Time stamps every entry (the commit's time).
	Time time.Time
}

// DistTree is the release archive's content: the binaries with the
// library, tokenizer and licences beside them, README.md, and
// SHA256SUMS listing every other file (check with `sha256sum -c`).
func DistTree(a App, o DistOptions) (*Tree, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := regular("README", o.Readme); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	t := NewTree()
	if err := errors.Join(a.AddBinaries(t, ""), a.AddRuntime(t, ""), t.AddSource("README.md", 0o644, o.Readme)); err != nil {
		return nil, err
	}
	sums, err := t.SHA256Sums()
	if err != nil {
		return nil, err
	}
	if err := t.AddData("SHA256SUMS", 0o644, sums); err != nil {
		return nil, err
	}
	return t, nil
}
