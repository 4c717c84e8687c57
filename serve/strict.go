package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// Strict input. The memory API (/v1/memories, /v1/search, PATCH) and the
// MCP tools refuse a field they do not know: a misspelt "treshold" would
// otherwise apply no threshold, and memories the caller meant to drop
// would reach an agent's context with no error. The rerank routes
// (/rerank, /v1/rerank, /v2/rerank) stay lenient: the Cohere, Jina and TEI
// SDKs send fields of their own that rerankd does not use.

// aliases are the names other memory APIs use for rerankd's fields (mem0,
// Cohere, Zep), suggested when the unknown field is one of them.
var aliases = map[string]string{
	"content":   "text",
	"memory":    "text",
	"data":      "text",
	"limit":     "top_k",
	"k":         "top_k",
	"topk":      "top_k",
	"top_n":     "top_k",
	"user_id":   "namespace",
	"agent_id":  "namespace",
	"filter":    "filters",
	"where":     "filters",
	"meta":      "metadata",
	"embedding": "vector",
}

// decodeStrictJSON is decodeJSON refusing unknown fields.
func decodeStrictJSON[T any](c *fiber.Ctx) (*T, error) {
	if err := checkJSONType(c); err != nil {
		return nil, err
	}
	return decodeStrictBody[T](c.Body())
}

// decodeStrict is decodeBytes refusing unknown fields: the answer is 400
// invalid_request naming the field, with a suggestion where one of T's
// fields is close ("treshold": did you mean "threshold"?).
func decodeStrictBody[T any](body []byte) (*T, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req T
	err := dec.Decode(&req)
	if err == nil {
		// One JSON value only, as json.Unmarshal requires.
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			return nil, newError(KindInvalid, "malformed JSON body: data after the top-level value")
		}
		return &req, nil
	}
	if name, ok := unknownField(err); ok {
		msg := "unknown field " + quote(name)
		if s := suggest(name, fieldNames(reflect.TypeFor[T]())); s != "" {
			msg += ": did you mean " + quote(s) + "?"
		}
		return nil, newError(KindInvalid, "%s (the memory API refuses fields it does not know; see /openapi.json)", msg)
	}
	if errors.Is(err, io.EOF) {
		return nil, newError(KindInvalid, "malformed JSON body: empty")
	}
	// The other errors as decodeBytes answers them: re-decode leniently
	// for the same message.
	if _, lerr := decodeBytes[T](body); lerr != nil {
		return nil, lerr
	}
	return nil, newError(KindInvalid, "malformed JSON body: %v", err)
}

func quote(s string) string { return `"` + truncField(s) + `"` }

// truncField keeps an echoed field name short.
func truncField(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// unknownField extracts the name from encoding/json's unknown-field error.
func unknownField(err error) (string, bool) {
	const p = `json: unknown field "`
	msg := err.Error()
	i := strings.Index(msg, p)
	if i < 0 {
		return "", false
	}
	rest := msg[i+len(p):]
	j := strings.LastIndexByte(rest, '"')
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

var fieldNamesCache sync.Map // reflect.Type → []string

// fieldNames lists the JSON names of t's fields and of every struct it
// holds, sorted: the names a suggestion is drawn from.
func fieldNames(t reflect.Type) []string {
	if v, ok := fieldNamesCache.Load(t); ok {
		return v.([]string)
	}
	set := map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				walk(f.Type)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			set[name] = true
			walk(f.Type)
		}
	}
	walk(t)
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	fieldNamesCache.Store(t, out)
	return out
}

// suggest returns the known name closest to name: its alias when it is
// another API's name for one of ours, else the nearest by edit distance
// (at most 2, and less than half the name), else "".
func suggest(name string, known []string) string {
	lower := strings.ToLower(name)
	if a, ok := aliases[lower]; ok && contains(known, a) {
		return a
	}
	best, bestD := "", 3
	for _, k := range known {
		d := editDistance(lower, strings.ToLower(k))
		if d < bestD && 2*d < len(k) {
			best, bestD = k, d
		}
	}
	return best
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// editDistance is the Damerau–Levenshtein distance (optimal string
// alignment) of two short strings: a swapped pair of letters counts 1.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
