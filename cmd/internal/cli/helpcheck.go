package cli

import (
	"regexp"
	"strings"
)

var (
	// flagLine is a flag as flag.PrintDefaults writes it: "  -name" and
	// the value name, if any.
	flagLine = regexp.MustCompile(`^  -(\S+)(?: (.*))?$`)
	// metaName is a value name chosen on purpose: `DIR`, `PREFIX`.
	metaName = regexp.MustCompile(`^[A-Z][A-Z_]*$`)
	// defaultNote is PrintDefaults' "(default ...)", which quotes settings,
	// not measurements.
	defaultNote = regexp.MustCompile(`\(default [^)]*\)`)
	// figure is a measured quantity: a number with a unit or a ratio
	// ("0.95x", "4-11 s", "1.8 GB", "~5x", "40%").
	figure = regexp.MustCompile(`(?i)\d(?:[\d.,]*\d)?\s*(?:x|ms|s|sec|seconds|gb|mb|kb|gib|mib|%)(?:\W|$)`)
)

// valueNames are the value names the flag package prints on its own.
var valueNames = map[string]bool{"string": true, "int": true, "uint": true, "int64": true, "uint64": true,
	"float": true, "duration": true, "value": true}

// HelpProblems lists what is wrong with a help text: a measurement quoted
// in it (help states what a setting does; figures go to docs/perf with the
// command that made them), and a flag whose value name is not one the flag
// package writes (a back-quoted word in the usage becomes the value name:
// "-quant rerankd quant-check").
func HelpProblems(help string) []string {
	var out []string
	for _, line := range strings.Split(help, "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil && m[2] != "" && !valueNames[m[2]] && !metaName.MatchString(m[2]) {
			out = append(out, "flag -"+m[1]+" prints the value name "+`"`+m[2]+`"`+" (a back-quoted word in its usage)")
		}
		if strings.Contains(line, "`") {
			out = append(out, "back quote in "+strings.TrimSpace(line))
		}
		if f := figure.FindString(defaultNote.ReplaceAllString(line, "")); f != "" {
			out = append(out, "measurement "+`"`+strings.TrimSpace(f)+`"`+" in "+strings.TrimSpace(line))
		}
	}
	return out
}
