// Command mkrelease builds rerankd's release artefacts from built
// binaries and the files scripts/setup.sh and scripts/setup_image.sh
// install, without a container daemon or registry (internal/release):
//
//	mkrelease image: the OCI image archive (docker load, podman load)
//	mkrelease dist:  the linux/amd64 release archive (.tar.gz)
//
// `make image` and `make dist` run it with every flag filled in; both
// outputs are reproducible from one commit (--epoch is its time).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/internal/release"
)

func main() {
	p := cli.Program{Name: "mkrelease", Commands: []cli.Command{
		{Name: "image", Summary: "write the OCI image archive (docker load / podman load)", Run: runImage},
		{Name: "dist", Summary: "write the linux/amd64 release archive", Run: runDist},
	}}
	os.Exit(p.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// common are the flags both commands take: what goes in, and when.
type common struct {
	out, bin, cmds, ortLib, tokenizer, licenses, version string
	epoch                                                int64
}

func defineCommon(fs *flag.FlagSet) *common {
	c := &common{}
	fs.StringVar(&c.out, "out", "", "file to write")
	fs.StringVar(&c.bin, "bin", "", "folder of the built binaries")
	fs.StringVar(&c.cmds, "cmds", "rerankd,eval", "comma-separated binaries (in --bin) to ship")
	fs.StringVar(&c.ortLib, "ort-lib", paths.ORTLib(), "ONNX Runtime library (scripts/setup.sh's, checked there)")
	fs.StringVar(&c.tokenizer, "tokenizer", paths.Tokenizer(), "default tokenizer folder (scripts/setup.sh's)")
	fs.StringVar(&c.licenses, "licenses", "packaging/licenses", "folder of licence texts for what is bundled")
	fs.StringVar(&c.version, "version", "", "version (tag) to stamp")
	fs.Int64Var(&c.epoch, "epoch", -1, "time stamp of every entry and of the image, in Unix seconds (SOURCE_DATE_EPOCH: the commit's time)")
	return c
}

// app checks the common flags and names the shipped files.
func (c *common) app() (release.App, error) {
	var errs []error
	if c.out == "" {
		errs = append(errs, errors.New("--out is required"))
	}
	if c.version == "" {
		errs = append(errs, errors.New("--version is required"))
	}
	if c.epoch < 0 {
		errs = append(errs, errors.New("--epoch is required (the commit's time: git log -1 --format=%ct)"))
	}
	a := release.App{Binaries: map[string]string{}, ORTLib: c.ortLib, ORTLibName: paths.ORTLibName,
		Tokenizer: c.tokenizer, TokenizerDir: paths.TokenizerDir, Licenses: c.licenses}
	for _, n := range strings.Split(c.cmds, ",") {
		if n = strings.TrimSpace(n); n != "" {
			a.Binaries[n] = filepath.Join(c.bin, n)
		}
	}
	errs = append(errs, a.Validate())
	if err := errors.Join(errs...); err != nil {
		return a, fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	return a, nil
}

func (c *common) time() time.Time { return time.Unix(c.epoch, 0).UTC() }

func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", cli.ErrUsage, fs.Args())
	}
	return nil
}

func runImage(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	c := defineCommon(fs)
	debs := fs.String("debs", filepath.Join(paths.CacheDir(), "debs"), "folder of the pinned .deb files (scripts/setup_image.sh's)")
	lock := fs.String("lock", "packaging/debian.lock", "the base layer's pinned Debian packages")
	revision := fs.String("revision", "", "commit the image is built from (label)")
	licenses := fs.String("spdx", "", "SPDX expression of the bundled parts' licences (label)")
	contents := fs.String("contents", "", "also write the base layer's size per folder to this file")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	a, err := c.app()
	if err != nil {
		return err
	}
	lf, err := os.Open(*lock)
	if err != nil {
		return fmt.Errorf("%w: --lock: %w", cli.ErrUsage, err)
	}
	pkgs, err := release.ParseLock(lf)
	_ = lf.Close()
	if err != nil {
		return err
	}
	cfg := release.DefaultImageConfig()
	cfg.Version, cfg.Revision, cfg.Created, cfg.Licenses, cfg.Packages = c.version, *revision, c.time(), *licenses, pkgs
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	var files [][]release.File
	for _, p := range pkgs {
		f, err := release.ReadDeb(filepath.Join(*debs, p.FileName()), p)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	base, err := release.BaseTree(files, cfg.User)
	if err != nil {
		return err
	}
	rt, bins := release.NewTree(), release.NewTree()
	if err := errors.Join(a.AddRuntime(rt, cfg.Root), rt.AddSource(filepath.Join(cfg.Root, "debian.lock"), 0o644, *lock), a.AddBinaries(bins, cfg.Root)); err != nil {
		return err
	}
	img, err := release.BuildImage(cfg, []release.LayerSpec{
		{Tree: base, Comment: "base: Debian packages " + *lock},
		{Tree: rt, Comment: "ONNX Runtime, default tokenizer, licences"},
		{Tree: bins, Comment: "binaries: " + c.cmds},
	})
	if err != nil {
		return err
	}
	digest, err := release.WriteArchive(c.out, img, cfg)
	if err != nil {
		return err
	}
	if *contents != "" {
		if err := os.WriteFile(*contents, []byte(strings.Join(release.Contents(base), "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	st, err := os.Stat(c.out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s %s:%s %s (%d bytes)\n", c.out, cfg.Name, cfg.Version, digest, st.Size())
	return err
}

func runDist(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dist", flag.ContinueOnError)
	c := defineCommon(fs)
	readme := fs.String("readme", "packaging/README-dist.md", "the archive's README")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	a, err := c.app()
	if err != nil {
		return err
	}
	o := release.DistOptions{Folder: "rerankd-" + c.version + "-linux-amd64", Readme: *readme, Time: c.time()}
	t, err := release.DistTree(a, o)
	if err != nil {
		return err
	}
	if err := release.WriteDist(c.out, t, o); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, c.out)
	return err
}
