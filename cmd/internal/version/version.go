// Package version is rerankd's version string, read from the build info
// the Go toolchain embeds: the module version (a tag, or a pseudo-version
// when built from a module download) and the VCS revision with its time
// and a "+dirty" mark when the work tree had changes. `rerankd version`,
// /info and MCP's serverInfo all report String.
package version

import (
	"runtime/debug"
	"strings"
)

// override is set at build time with -ldflags "-X
// github.com/rerankd/rerankd/cmd/internal/version.override=v1.2.3" by a
// packager who builds without VCS information; it wins when set.
var override string

// String is the version: override when set, else the module version and
// the revision from the build info ("(devel) rev 1896833abcde+dirty"),
// else "(unknown)" for a binary built without build info.
func String() string {
	if override != "" {
		return override
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo formats bi's module version and VCS settings.
func fromBuildInfo(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" || strings.Contains(v, shortRev(rev)) {
		// A pseudo-version already holds the revision.
		if dirty && !strings.HasSuffix(v, "+dirty") {
			v += "+dirty"
		}
		return v
	}
	v += " rev " + shortRev(rev)
	if dirty {
		v += "+dirty"
	}
	return v
}

// shortRev is the first 12 hexadecimal digits of a revision, as Go's
// pseudo-versions write it.
func shortRev(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
