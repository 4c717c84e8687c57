// Package msgcheck finds the faults of error messages written for people
// that tests of the API and the CLIs look for: a prefix said twice
// ("open x: open x: ..."), a Go package's name as a prefix ("store: "), a
// Go identifier (a CamelCase field name such as HalfLife) and a fmt verb
// left unfilled.
package msgcheck

import (
	"fmt"
	"regexp"
	"strings"
)

// packagePrefix is a segment that is one of this module's package names.
var packagePrefix = regexp.MustCompile(`(?:^|: )(retrieval|store|pgstore|pgping|pgput|pgsequence|post|serve|rerank|scheduler|lexical|bm25|hnsw): `)

// goIdent is a CamelCase word of two or more capitalised parts (HalfLife,
// VectorWeight) or a lower-case start with a capital inside (maxTokens).
var goIdent = regexp.MustCompile(`\b(?:[A-Z][a-z0-9]+){2,}\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b`)

// quoted is a quoted value the message repeats (the caller's input).
var quoted = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`|'[^']*'")

// prose is msg without what is not its own words: quoted values, paths,
// URLs and flags, whose spelling is the caller's or the system's.
func prose(msg string) string {
	msg = quoted.ReplaceAllString(msg, " ")
	words := strings.Fields(msg)
	keep := words[:0]
	for _, w := range words {
		if strings.ContainsAny(w, "/\\=") || strings.HasPrefix(w, "-") {
			continue
		}
		keep = append(keep, w)
	}
	return strings.Join(keep, " ")
}

// allowed are words of that shape that are names people use.
var allowed = map[string]bool{
	"PostgreSQL": true, "JavaScript": true, "TypeScript": true, "ChromeDriver": true, "OpenAPI": true,
	"HuggingFace": true, "LoCoMo": true, "MiB": true, "GiB": true, "KiB": true, "TiB": true,
	"WWW": true, "ONNX": true, "SentencePiece": true, "WordPiece": true, "BertNormalizer": true,
	"MemReranker": true,
}

// Problems lists what is wrong with msg; nil when nothing is.
func Problems(msg string) []string {
	var out []string
	segs := strings.Split(msg, ": ")
	for i := 1; i < len(segs); i++ {
		if segs[i] != "" && segs[i] == segs[i-1] {
			out = append(out, fmt.Sprintf("repeats %q", segs[i]))
		}
	}
	// A prefix repeated with one segment between ("store: x: store: y")
	// is still the same prefix said twice when it wraps the same words.
	for i := 0; i+1 < len(segs); i++ {
		if len(segs[i]) > 3 && strings.HasPrefix(segs[i+1], segs[i]+" ") {
			out = append(out, fmt.Sprintf("repeats %q", segs[i]))
		}
	}
	if m := packagePrefix.FindStringSubmatch(msg); m != nil {
		out = append(out, fmt.Sprintf("a Go package's name as a prefix (%q)", m[1]))
	}
	for _, w := range goIdent.FindAllString(prose(msg), -1) {
		if !allowed[w] {
			out = append(out, fmt.Sprintf("a Go identifier %q", w))
		}
	}
	if strings.Contains(msg, "%!") {
		out = append(out, "an unfilled fmt verb")
	}
	return out
}
