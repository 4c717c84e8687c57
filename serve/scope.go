package serve

import (
	"fmt"
	"strings"

	"github.com/rerankd/rerankd/retrieval"
)

// scope is the set of namespaces one API key may read and write. The zero
// scope allows everything (a key without a configured scope, or no auth).
type scope struct {
	restricted bool
	exact      map[string]bool
	prefixes   []string // from patterns "prefix*"
}

// newScope compiles patterns: "name" matches that namespace, "prefix*"
// every namespace starting with prefix, "*" all. No patterns: unrestricted.
func newScope(patterns []string) scope {
	if len(patterns) == 0 {
		return scope{}
	}
	s := scope{restricted: true, exact: map[string]bool{}}
	for _, p := range patterns {
		if p == "*" {
			return scope{}
		}
		if pre, ok := strings.CutSuffix(p, "*"); ok {
			s.prefixes = append(s.prefixes, pre)
		} else {
			s.exact[p] = true
		}
	}
	return s
}

func (s scope) allows(ns string) bool {
	if !s.restricted || s.exact[ns] {
		return true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(ns, p) {
			return true
		}
	}
	return false
}

// validateScopes checks a key → patterns mapping against the keys.
func validateScopes(keys []string, scopes map[string][]string) []error {
	known := map[string]bool{}
	for _, k := range keys {
		known[k] = true
	}
	var errs []error
	n := 0
	for key, pats := range scopes {
		n++
		if !known[key] {
			// Never echo the key itself into logs or errors.
			errs = append(errs, fmt.Errorf("key scope %d names a key that is not among the API keys", n))
		}
		if len(pats) == 0 {
			errs = append(errs, fmt.Errorf("key scope %d: empty namespace list (omit the key for all namespaces, or use \"*\")", n))
		}
		for _, p := range pats {
			name := strings.TrimSuffix(p, "*")
			if p == "*" || (name != p && name == "") {
				continue
			}
			if err := retrieval.ValidateNamespace(name); err != nil {
				errs = append(errs, fmt.Errorf("key scope %d: pattern %q: %w", n, p, err))
			}
		}
	}
	return errs
}
