package main

import (
	"strings"
	"testing"
)

func TestParseStoreLocation(t *testing.T) {
	const secret = "s3cr3t"
	cases := []struct {
		in   string
		kind storeKind
		conn string // for accepted values: what the driver or bbolt gets
		err  string // for refused values: a substring of the error
	}{
		{in: "", kind: storeNone},
		{in: "none", kind: storeNone},
		{in: "memories.db", kind: storeFile, conn: "memories.db"},
		{in: "./data/m.db", kind: storeFile, conn: "./data/m.db"},
		{in: "/var/lib/rerankd/a b.db", kind: storeFile, conn: "/var/lib/rerankd/a b.db"},
		{in: `C:\data\m.db`, kind: storeFile, conn: `C:\data\m.db`},
		{in: "postgres://u:" + secret + "@h/db", kind: storePostgres, conn: "postgres://u:" + secret + "@h/db"},
		{in: "postgresql://u@h/db", kind: storePostgres, conn: "postgresql://u@h/db"},
		{in: "POSTGRES://u:" + secret + "@h/db", kind: storePostgres, conn: "postgres://u:" + secret + "@h/db"},
		{in: "PostgreSQL://u@h/db?sslmode=disable", kind: storePostgres, conn: "postgresql://u@h/db?sslmode=disable"},
		{in: "host=localhost dbname=mem password=" + secret, kind: storePostgres, conn: "host=localhost dbname=mem password=" + secret},
		{in: "dbname = mem", kind: storePostgres, conn: "dbname = mem"},
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
			loc, err := parseStoreLocation("--store", c.in)
			if c.err != "" {
				if err == nil {
					t.Fatalf("accepted as kind %d (%q); want an error with %q", loc.kind, loc.conn, c.err)
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
			if loc.kind != c.kind || loc.conn != c.conn {
				t.Errorf("got kind %d conn %q, want kind %d conn %q", loc.kind, loc.conn, c.kind, c.conn)
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
		loc, err := parseStoreLocation("--store", s)
		if err != nil {
			if len(s) >= 8 && strings.Contains(err.Error(), s) {
				t.Fatalf("error %q repeats the value", err)
			}
			return
		}
		if loc.kind == storeFile && strings.Contains(s, "://") {
			t.Fatalf("%q taken as a file", s)
		}
	})
}
