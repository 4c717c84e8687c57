package app

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// StoreKind is what a --store value names.
type StoreKind int

// The kinds of store a --store value can name.
const (
	StoreNone     StoreKind = iota // "none" or "": no memory API
	StoreFile                      // a bbolt file, this process alone
	StorePostgres                  // a PostgreSQL database, shared by replicas
)

// StoreForms is the sentence every refusal ends with: a typo must never
// quietly become a local file, so the accepted forms are named each time.
const StoreForms = "use a file path, a postgres:// or postgresql:// URL, a key=value PostgreSQL connection string (host=... dbname=...), or none"

var (
	// schemeRe is a URI scheme and its colon (RFC 3986: a letter, then
	// letters, digits, '+', '-', '.').
	schemeRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`)
	// keywordRe is the start of a libpq keyword/value string ("host=...").
	keywordRe = regexp.MustCompile(`^[A-Za-z_]+[ \t]*=`)
)

// StoreLocation is a parsed --store value. For PostgreSQL, conn is what
// the driver gets: the scheme lower-cased, since the driver recognises only
// "postgres://" and "postgresql://" as written.
type StoreLocation struct {
	Kind StoreKind
	Conn string
}

// ParseStoreLocation classifies the value of a store flag (named flag in
// errors: --store, --from, --to). What is not a URL, a
// keyword/value string or "none" is a file path, but a value that looks
// like a URL of another kind (mysql://, pg://, postgres:/ with one slash,
// host:port/db) is refused rather than created as a file whose name holds
// the password. Errors never repeat the value: it may hold a password.
func ParseStoreLocation(flag, s string) (StoreLocation, error) {
	if s == "" || s == "none" {
		return StoreLocation{Kind: StoreNone}, nil
	}
	if strings.TrimFunc(s, unicode.IsSpace) != s {
		return StoreLocation{}, fmt.Errorf("%s begins or ends with white space; %s", flag, StoreForms)
	}
	if m := schemeRe.FindStringSubmatch(s); m != nil {
		scheme, rest := strings.ToLower(m[1]), s[len(m[0]):]
		switch {
		case scheme == "postgres" || scheme == "postgresql":
			if !strings.HasPrefix(rest, "//") {
				return StoreLocation{}, fmt.Errorf("%s has the scheme %q without \"//\" after it; %s", flag, m[1], StoreForms)
			}
			return StoreLocation{Kind: StorePostgres, Conn: scheme + ":" + rest}, nil
		case len(scheme) == 1 && (strings.HasPrefix(rest, `\`) || strings.HasPrefix(rest, "/") && !strings.HasPrefix(rest, "//")):
			return StoreLocation{Kind: StoreFile, Conn: s}, nil // a Windows drive letter
		default:
			return StoreLocation{}, fmt.Errorf("%s has the scheme %q, which is not a store rerankd opens; %s", flag, m[1], StoreForms)
		}
	}
	if keywordRe.MatchString(s) {
		return StoreLocation{Kind: StorePostgres, Conn: s}, nil
	}
	if strings.Contains(s, "://") {
		return StoreLocation{}, fmt.Errorf("%s looks like a URL inside a path (it holds \"://\"); %s", flag, StoreForms)
	}
	return StoreLocation{Kind: StoreFile, Conn: s}, nil
}
