package app

import (
	"strings"
	"testing"
)

func TestParseStoreLocation(t *testing.T) {
	const secret = "s3cr3t"
	cases := []struct {
		in   string
		kind StoreKind
		conn string // for accepted values: what the driver or bbolt gets
		err  string // for refused values: a substring of the error
	}{
		{in: "", kind: StoreNone},
		{in: "none", kind: StoreNone},
		{in: "memories.db", kind: StoreFile, conn: "memories.db"},
		{in: "./data/m.db", kind: StoreFile, conn: "./data/m.db"},
		{in: "/var/lib/rerankd/a b.db", kind: StoreFile, conn: "/var/lib/rerankd/a b.db"},
		{in: `C:\data\m.db`, kind: StoreFile, conn: `C:\data\m.db`},
		{in: "postgres://u:" + secret + "@h/db", kind: StorePostgres, conn: "postgres://u:" + secret + "@h/db"},
		{in: "postgresql://u@h/db", kind: StorePostgres, conn: "postgresql://u@h/db"},
		{in: "POSTGRES://u:" + secret + "@h/db", kind: StorePostgres, conn: "postgres://u:" + secret + "@h/db"},
		{in: "PostgreSQL://u@h/db?sslmode=disable", kind: StorePostgres, conn: "postgresql://u@h/db?sslmode=disable"},
		{in: "host=localhost dbname=mem password=" + secret, kind: StorePostgres, conn: "host=localhost dbname=mem password=" + secret},
		{in: "dbname = mem", kind: StorePostgres, conn: "dbname = mem"},
		{in: "pg://u:" + secret + "@h/db", err: `the scheme "pg"`},
		{in: "mysql://u:" + secret + "@h/db", err: `the scheme "mysql"`},
		{in: "postgresql:/u:" + secret + "@h/db", err: `without "//"`},
		{in: "postgres:u@h/db", err: `without "//"`},
		{in: "localhost:5432/db", err: `the scheme "localhost"`},
		{in: "u:" + secret + "@h/db", err: `the scheme "u"`},
		{in: " postgres://u:" + secret + "@h/db", err: "white space"},
		{in: "memories.db\n", err: "white space"},
		{in: "data/postgres://u:" + secret + "@h/db", err: "URL inside a path"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			loc, err := ParseStoreLocation("--store", c.in)
			if c.err != "" {
				if err == nil {
					t.Fatalf("accepted as kind %d (%q); want an error with %q", loc.Kind, loc.Conn, c.err)
				}
				msg := err.Error()
				for _, want := range []string{c.err, "--store", "postgres://", "none"} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q lacks %q", msg, want)
					}
				}
				if strings.Contains(msg, secret) {
					t.Errorf("error %q shows the password", msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if loc.Kind != c.kind || loc.Conn != c.conn {
				t.Errorf("got kind %d conn %q, want kind %d conn %q", loc.Kind, loc.Conn, c.kind, c.conn)
			}
		})
	}
}

// FuzzParseStoreLocation: every value is classified or refused, a refusal
// never repeats a password-like part of the value, and a file is never
// something that starts like a URL.
func FuzzParseStoreLocation(f *testing.F) {
	for _, s := range []string{"m.db", "postgres://u:p@h/db", "pg://x", "host=h", " x", "a://b", `C:\x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		loc, err := ParseStoreLocation("--store", s)
		if err != nil {
			if len(s) >= 8 && strings.Contains(err.Error(), s) {
				t.Fatalf("error %q repeats the value", err)
			}
			return
		}
		if loc.Kind == StoreFile && strings.Contains(s, "://") {
			t.Fatalf("%q taken as a file", s)
		}
	})
}
