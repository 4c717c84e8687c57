package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	rev := "1896833abcdef0123456789abcdef0123456789a"
	set := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	cases := []struct {
		name, version string
		settings      []debug.BuildSetting
		want          string
	}{
		{"work tree, clean", "(devel)", set("vcs.revision", rev, "vcs.modified", "false"), "(devel) rev 1896833abcde"},
		{"work tree, dirty", "(devel)", set("vcs.revision", rev, "vcs.modified", "true"), "(devel) rev 1896833abcde+dirty"},
		{"tag", "v1.4.0", set("vcs.revision", rev), "v1.4.0 rev 1896833abcde"},
		{"pseudo-version holds the revision", "v0.0.0-20261207025711-1896833abcde", set("vcs.revision", rev), "v0.0.0-20261207025711-1896833abcde"},
		{"no VCS", "", nil, "(devel)"},
		{"module download", "v1.4.0", nil, "v1.4.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := fromBuildInfo(&debug.BuildInfo{Main: debug.Module{Version: c.version}, Settings: c.settings})
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestStringNotDev: a test binary has build info, so String never falls
// back to the old "dev" placeholder.
func TestStringNotDev(t *testing.T) {
	if s := String(); s == "" || s == "dev" {
		t.Errorf("String() = %q", s)
	}
}
