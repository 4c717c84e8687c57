package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// FlagGroup is one heading of a command's help and the flags listed
// under it, in order.
type FlagGroup struct {
	Title string
	// Note, when set, is printed under the title.
	Note  string
	Flags []string
	// More groups are listed by --help-all only (and in the generated
	// docs/user/configuration.md); -h names them in one line.
	More bool
}

// helpAllArg is the argument that lists every group.
const helpAllArg = "--help-all"

// GroupedUsage returns a Usage function for fs that prints head, the
// flags of each group under its title (the More groups only after
// ParseGrouped saw --help-all), then tail. A flag of fs in no group is
// listed under "Other", so none is ever hidden by mistake.
func GroupedUsage(fs *flag.FlagSet, head string, groups []FlagGroup, tail string) func() {
	return func() {
		w := fs.Output()
		fmt.Fprintln(w, head)
		all := fs.Lookup(helpAllFlag) != nil && fs.Lookup(helpAllFlag).Value.String() == "true"
		var more []string
		for _, g := range WithOthers(fs, groups) {
			if g.More && !all {
				more = append(more, strings.ToLower(g.Title))
				continue
			}
			fmt.Fprintf(w, "\n%s:\n", g.Title)
			if g.Note != "" {
				fmt.Fprintf(w, "  (%s)\n", g.Note)
			}
			PrintFlags(w, fs, g.Flags)
		}
		if len(more) > 0 {
			fmt.Fprintf(w, "\nMore flags (%s): %s\n", strings.Join(more, ", "), helpAllArg)
		}
		fmt.Fprint(w, tail)
	}
}

// WithOthers is groups with a last group "Other" holding the flags of fs
// that no group names (none when every flag has its group); the
// help-all switch itself is left out.
func WithOthers(fs *flag.FlagSet, groups []FlagGroup) []FlagGroup {
	var other []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == helpAllFlag {
			return
		}
		for _, g := range groups {
			if slices.Contains(g.Flags, f.Name) {
				return
			}
		}
		other = append(other, f.Name)
	})
	if len(other) == 0 {
		return groups
	}
	return append(slices.Clone(groups), FlagGroup{Title: "Other", Flags: other})
}

// PrintFlags prints the named flags of fs as flag.PrintDefaults does.
func PrintFlags(w io.Writer, fs *flag.FlagSet, names []string) {
	sub := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	for _, n := range names {
		if f := fs.Lookup(n); f != nil {
			sub.Var(f.Value, f.Name, f.Usage)
			sub.Lookup(n).DefValue = f.DefValue
		}
	}
	sub.SetOutput(w)
	sub.PrintDefaults()
}

// helpAllFlag is the hidden flag ParseGrouped registers for --help-all.
const helpAllFlag = "help-all"

// ParseGrouped is ParseFlags for a command whose Usage is a
// GroupedUsage: it also answers --help-all (every group, exit 0).
func ParseGrouped(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	if fs.Lookup(helpAllFlag) == nil {
		fs.Bool(helpAllFlag, false, "list every flag")
	}
	if err := ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.Lookup(helpAllFlag).Value.String() == "true" {
		fs.Usage()
		return flag.ErrHelp
	}
	return nil
}
