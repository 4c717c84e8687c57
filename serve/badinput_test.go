package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/internal/msgcheck"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/scoring"
)

// badCase is one hostile input and the documented answer (docs/bad-input.md).
type badCase struct {
	name, method, path, ctype, body string
	hdr                             []string // header name, value, ...
	code                            int
	// kind is the error_type of the JSON error body; "" means the input is
	// documented as accepted (a 2xx JSON answer) or, for HEAD, that the
	// answer has no body.
	kind Kind
}

const (
	okRerank = `{"query":"caroline support group","documents":["caroline went to the support group","melanie painted"]}`
	okSearch = `{"namespace":"alice","query":"paris"}`
)

// rerankCatalogue is sent to /rerank, /v1/rerank and /v2/rerank.
func rerankCatalogue() []badCase {
	j := "application/json"
	manyDocs := `{"query":"q","documents":[` + strings.TrimSuffix(strings.Repeat(`"a",`, 100_000), ",") + `]}`
	tenMB := `{"query":"q","documents":["` + strings.Repeat("a", 10<<20) + `"]}`
	deep := strings.Repeat("[", 100_000)
	deepObj := `{"query":"q","documents":[{"text":"a","x":` + strings.Repeat(`{"a":`, 20_000) + `1` + strings.Repeat("}", 20_000) + `}]}`
	r := func(name, body string, code int, kind Kind) badCase {
		return badCase{name: name, method: http.MethodPost, ctype: j, body: body, code: code, kind: kind}
	}
	return []badCase{
		r("malformed JSON", `{"query":`, 400, KindInvalid),
		r("truncated JSON", okRerank[:len(okRerank)-5], 400, KindInvalid),
		r("truncated string", `{"query":"caro`, 400, KindInvalid),
		r("empty body", ``, 400, KindInvalid),
		r("JSON null", `null`, 400, KindInvalid),
		r("JSON string", `"query"`, 422, KindValidation),
		r("JSON array", `[{"query":"q"}]`, 422, KindValidation),
		r("trailing garbage", okRerank+`}`, 400, KindInvalid),
		r("two objects", okRerank+okRerank, 400, KindInvalid),
		r("single quotes", `{'query':'q','documents':['a']}`, 400, KindInvalid),
		r("trailing comma", `{"query":"q","documents":["a",]}`, 400, KindInvalid),
		r("comment", `{"query":"q", /* x */ "documents":["a"]}`, 400, KindInvalid),
		r("NaN literal", `{"query":"q","documents":["a"],"threshold":NaN}`, 400, KindInvalid),
		r("query number", `{"query":5,"documents":["a"]}`, 422, KindValidation),
		r("query array", `{"query":["q"],"documents":["a"]}`, 422, KindValidation),
		r("query object", `{"query":{"text":"q"},"documents":["a"]}`, 422, KindValidation),
		r("documents string", `{"query":"q","documents":"a"}`, 422, KindValidation),
		r("documents object", `{"query":"q","documents":{"text":"a"}}`, 422, KindValidation),
		// Documents decode themselves (string or object): their errors are 400.
		r("document number", `{"query":"q","documents":[5]}`, 422, KindValidation),
		r("document text number", `{"query":"q","documents":[{"text":5}]}`, 422, KindValidation),
		r("document null", `{"query":"q","documents":[null]}`, 422, KindValidation),
		r("document object without text", `{"query":"q","documents":[{"body":"a"}]}`, 422, KindValidation),
		r("document text number", `{"query":"q","documents":[{"text":5}]}`, 422, KindValidation),
		r("texts numbers", `{"query":"q","texts":[1,2]}`, 422, KindValidation),
		r("top_n string", `{"query":"q","documents":["a"],"top_n":"2"}`, 422, KindValidation),
		r("top_n float", `{"query":"q","documents":["a"],"top_n":1.5}`, 422, KindValidation),
		r("top_n 1e400", `{"query":"q","documents":["a"],"top_n":1e400}`, 422, KindValidation),
		r("top_n 2^63", `{"query":"q","documents":["a"],"top_n":9223372036854775808}`, 422, KindValidation),
		r("top_n -2^63", `{"query":"q","documents":["a"],"top_n":-9223372036854775808}`, 422, KindValidation),
		r("top_n negative", `{"query":"q","documents":["a"],"top_n":-1}`, 422, KindValidation),
		r("top_n zero", `{"query":"q","documents":["a"],"top_n":0}`, 422, KindValidation),
		r("top_n 2^63-1 (accepted)", `{"query":"q","documents":["a"],"top_n":9223372036854775807}`, 200, ""),
		r("threshold 1e400", `{"query":"q","documents":["a"],"threshold":1e400}`, 422, KindValidation),
		r("threshold negative", `{"query":"q","documents":["a"],"threshold":-0.1}`, 422, KindValidation),
		r("threshold string", `{"query":"q","documents":["a"],"threshold":"0.5"}`, 422, KindValidation),
		r("max_tokens_per_doc negative", `{"query":"q","documents":["a"],"max_tokens_per_doc":-1}`, 422, KindValidation),
		r("max_tokens_per_doc 2^63", `{"query":"q","documents":["a"],"max_tokens_per_doc":9223372036854775808}`, 422, KindValidation),
		r("max_tokens_per_doc 2^63-1 (server cap)", `{"query":"q","documents":["a"],"max_tokens_per_doc":9223372036854775807}`, 200, ""),
		r("return_documents string", `{"query":"q","documents":["a"],"return_documents":"yes"}`, 422, KindValidation),
		r("truncate string", `{"query":"q","texts":["a"],"truncate":"no"}`, 422, KindValidation),
		r("truncation_direction bad", `{"query":"q","texts":["a"],"truncation_direction":"up"}`, 422, KindValidation),
		r("context not a list", `{"query":"q","documents":["a"],"context":"turn"}`, 422, KindValidation),
		r("empty query", `{"query":"","documents":["a"]}`, 400, KindInvalid),
		r("whitespace query", `{"query":" \t\r\n\u00a0\u2003","documents":["a"]}`, 400, KindInvalid),
		r("missing query", `{"documents":["a"]}`, 400, KindInvalid),
		r("null query", `{"query":null,"documents":["a"]}`, 400, KindInvalid),
		r("zero documents", `{"query":"q","documents":[]}`, 422, KindValidation),
		r("no documents field", `{"query":"q"}`, 422, KindValidation),
		r("documents null", `{"query":"q","documents":null}`, 422, KindValidation),
		r("100k documents", manyDocs, 422, KindValidation),
		r("documents and texts", `{"query":"q","documents":["a"],"texts":["b"]}`, 422, KindValidation),
		r("10 MB document", tenMB, 413, KindTooLarge),
		r("invalid UTF-8 (read as U+FFFD)", "{\"query\":\"q\xff\xfe\",\"documents\":[\"a\xc3\x28\",\"\xed\xa0\x80\"]}", 200, ""),
		r("escaped lone surrogate", `{"query":"q\ud800","documents":["\udfff"]}`, 200, ""),
		r("raw NUL byte in JSON", "{\"query\":\"q\x00\",\"documents\":[\"a\"]}", 400, KindInvalid),
		r("escaped NUL bytes (text)", `{"query":"q\u0000q","documents":["\u0000","a\u0000b"]}`, 200, ""),
		r("NUL-only query", `{"query":"\u0000","documents":["a"]}`, 200, ""),
		r("raw control characters", "{\"query\":\"q\x01\x1f\",\"documents\":[\"a\"]}", 400, KindInvalid),
		r("100k nested arrays", deep, 400, KindInvalid),
		r("100k nested arrays in documents", `{"query":"q","documents":`+deep, 400, KindInvalid),
		r("20k nested objects in a document", deepObj, 400, KindInvalid),
		r("duplicate key: last wins (empty)", `{"query":"q","query":"","documents":["a"]}`, 400, KindInvalid),
		r("duplicate key: last wins (valid)", `{"query":"","query":"q","documents":["a"]}`, 200, ""),
		r("unknown fields (ignored)", `{"query":"q","documents":["a"],"topn":1,"__proto__":{"x":1}}`, 200, ""),
		r("keys match case-insensitively", `{"Query":"q","DOCUMENTS":["a"]}`, 200, ""),
		r("case-insensitive duplicate: last wins", `{"query":"q","QUERY":"","documents":["a"]}`, 400, KindInvalid),
		{name: "text/plain", method: http.MethodPost, ctype: "text/plain", body: okRerank, code: 415, kind: KindMediaType},
		{name: "form", method: http.MethodPost, ctype: "application/x-www-form-urlencoded", body: "query=q", code: 415, kind: KindMediaType},
		{name: "multipart", method: http.MethodPost, ctype: "multipart/form-data; boundary=x", body: okRerank, code: 415, kind: KindMediaType},
		{name: "unparsable content type", method: http.MethodPost, ctype: "application/json; ;;=", body: okRerank, code: 415, kind: KindMediaType},
		{name: "json with charset (accepted)", method: http.MethodPost, ctype: "application/json; charset=utf-8", body: okRerank, code: 200},
		{name: "+json suffix (accepted)", method: http.MethodPost, ctype: "application/vnd.api+json", body: okRerank, code: 200},
		{name: "no content type (read as JSON)", method: http.MethodPost, body: okRerank, code: 200},
		{name: "GET (POST only)", method: http.MethodGet, code: 405, kind: KindMethod},
		{name: "PUT", method: http.MethodPut, ctype: j, body: okRerank, code: 405, kind: KindMethod},
		{name: "lowercase post", method: "post", ctype: j, body: okRerank, code: 405, kind: KindMethod},
		{name: "unknown method", method: "BREW", ctype: j, body: okRerank, code: 405, kind: KindMethod},
		{name: "OPTIONS (no CORS)", method: http.MethodOptions, code: 405, kind: KindMethod},
		{name: "HEAD (POST only, no body)", method: http.MethodHead, code: 405},
		{name: "oversized header", method: http.MethodPost, ctype: j, body: okRerank, hdr: []string{"X-Big", strings.Repeat("h", 20<<10)}, code: 431, kind: KindTooLarge},
		{name: "many headers", method: http.MethodPost, ctype: j, body: okRerank, hdr: manyHeaders(2000), code: 431, kind: KindTooLarge},
	}
}

func manyHeaders(n int) []string {
	var h []string
	for i := range n {
		h = append(h, fmt.Sprintf("X-H%d", i), "v")
	}
	return h
}

// getCatalogue covers the GET endpoints that take no input: hostile
// methods, headers and query strings.
func getCatalogue(path string) []badCase {
	return []badCase{
		{name: "query string junk (ignored)", method: http.MethodGet, path: path + "?x=%ZZ&&=&y=%00%FF", code: 200},
		{name: "body on GET (ignored)", method: http.MethodGet, ctype: "application/json", body: `{"x":`, code: 200},
		{name: "HEAD (no body)", method: http.MethodHead, code: 200},
		{name: "POST", method: http.MethodPost, ctype: "application/json", body: `{}`, code: 405, kind: KindMethod},
		{name: "DELETE", method: http.MethodDelete, code: 405, kind: KindMethod},
		{name: "OPTIONS", method: http.MethodOptions, code: 405, kind: KindMethod},
		{name: "lowercase get", method: "get", code: 405, kind: KindMethod},
		{name: "unknown method", method: "PROPFIND", code: 405, kind: KindMethod},
		{name: "oversized header", method: http.MethodGet, hdr: []string{"Cookie", strings.Repeat("c", 20<<10)}, code: 431, kind: KindTooLarge},
		{name: "oversized URL", method: http.MethodGet, path: path + "?q=" + strings.Repeat("u", 20<<10), code: 431, kind: KindTooLarge},
	}
}

// memoryCatalogue covers the memory API; namespace "alice" holds m1.
func memoryCatalogue() []badCase {
	j := "application/json"
	p := func(name, body string, code int, kind Kind) badCase {
		return badCase{name: "add: " + name, method: http.MethodPost, path: "/v1/memories", ctype: j, body: body, code: code, kind: kind}
	}
	s := func(name, body string, code int, kind Kind) badCase {
		return badCase{name: "search: " + name, method: http.MethodPost, path: "/v1/search", ctype: j, body: body, code: code, kind: kind}
	}
	g := func(name, method, path string, code int, kind Kind) badCase {
		return badCase{name: name, method: method, path: path, code: code, kind: kind}
	}
	u := func(name, path, body string, code int, kind Kind) badCase {
		return badCase{name: "update: " + name, method: http.MethodPatch, path: path, ctype: j, body: body, code: code, kind: kind}
	}
	many := `{"namespace":"a","memories":[` + strings.TrimSuffix(strings.Repeat(`{"text":"a"},`, retrieval.MaxBatch+1), ",") + `]}`
	meta := map[string]string{}
	for i := range 65 {
		meta[fmt.Sprint("k", i)] = "v"
	}
	metaJSON, _ := json.Marshal(meta)
	return []badCase{
		p("malformed JSON", `{"namespace":"a","text":`, 400, KindInvalid),
		p("truncated JSON", `{"namespace":"a","memories":[{"text":"x"}`, 400, KindInvalid),
		p("empty body", ``, 400, KindInvalid),
		p("JSON array", `[{"namespace":"a","text":"x"}]`, 422, KindValidation),
		p("text number", `{"namespace":"a","text":5}`, 422, KindValidation),
		p("memories object", `{"namespace":"a","memories":{"text":"x"}}`, 422, KindValidation),
		p("metadata value number (typed, accepted)", `{"namespace":"a","text":"x","metadata":{"k":1,"b":true,"z":null}}`, 201, ""),
		p("metadata value object", `{"namespace":"a","text":"x","metadata":{"k":{"a":1}}}`, 422, KindValidation),
		p("metadata value list", `{"namespace":"a","text":"x","metadata":{"k":[1]}}`, 422, KindValidation),
		p("metadata number 1e400", `{"namespace":"a","text":"x","metadata":{"k":1e400}}`, 422, KindValidation),
		p("time number", `{"namespace":"a","text":"x","time":5}`, 422, KindValidation),
		p("time not RFC 3339", `{"namespace":"a","text":"x","time":"yesterday"}`, 422, KindValidation),
		p("time year 99999", `{"namespace":"a","text":"x","time":"99999-01-01T00:00:00Z"}`, 422, KindValidation),
		p("vector string", `{"namespace":"a","text":"x","vector":"1,2"}`, 422, KindValidation),
		p("vector 1e400", `{"namespace":"a","text":"x","vector":[1e400]}`, 422, KindValidation),
		p("empty text", `{"namespace":"a","text":""}`, 422, KindValidation),
		p("missing namespace", `{"text":"x"}`, 422, KindValidation),
		p("namespace with /", `{"namespace":"a/b","text":"x"}`, 422, KindValidation),
		p("namespace with \\", `{"namespace":"a\\b","text":"x"}`, 422, KindValidation),
		p("namespace ..", `{"namespace":"..","text":"x"}`, 422, KindValidation),
		p("namespace ../../etc", `{"namespace":"../../etc","text":"x"}`, 422, KindValidation),
		p("namespace .hidden", `{"namespace":".hidden","text":"x"}`, 422, KindValidation),
		p("namespace with space", `{"namespace":"a b","text":"x"}`, 422, KindValidation),
		p("namespace with NUL", `{"namespace":"a\u0000b","text":"x"}`, 422, KindValidation),
		p("namespace invalid UTF-8", "{\"namespace\":\"a\xff\",\"text\":\"x\"}", 422, KindValidation),
		p("namespace non-ASCII", `{"namespace":"ålice","text":"x"}`, 422, KindValidation),
		p("namespace 129 bytes", `{"namespace":"`+strings.Repeat("n", 129)+`","text":"x"}`, 422, KindValidation),
		p("id ../x", `{"namespace":"a","id":"../x","text":"x"}`, 422, KindValidation),
		p("id with %2F", `{"namespace":"a","id":"a%2Fb","text":"x"}`, 422, KindValidation),
		p("batch namespace with separator", `{"namespace":"a","memories":[{"namespace":"b/c","text":"x"}]}`, 422, KindValidation),
		p("text over 1 MiB", `{"namespace":"a","text":"`+strings.Repeat("t", 1<<20+1)+`"}`, 422, KindValidation),
		p("10 MB text", `{"namespace":"a","text":"`+strings.Repeat("t", 10<<20)+`"}`, 413, KindTooLarge),
		p("more than MaxBatch memories", many, 413, KindTooLarge),
		p("65 metadata keys", `{"namespace":"a","text":"x","metadata":`+string(metaJSON)+`}`, 422, KindValidation),
		p("source with NUL", `{"namespace":"a","text":"x","source":"/a\u0000b"}`, 422, KindValidation),
		p("deep nesting", `{"namespace":"a","text":"x","metadata":`+strings.Repeat(`{"a":`, 100_000), 400, KindInvalid),
		p("wrong content type", `{"namespace":"a","text":"x"}`, 415, KindMediaType).withCtype("text/plain"),
		p("unknown field (refused)", `{"namespace":"a","text":"x","colour":"red"}`, 400, KindInvalid),
		p("mem0's content for text", `{"namespace":"a","content":"x"}`, 400, KindInvalid),
		p("unknown field in a batch item", `{"namespace":"a","memories":[{"text":"x","txt":"y"}]}`, 400, KindInvalid),
		p("duplicate key: last wins", `{"namespace":"a/b","namespace":"a","text":"x"}`, 201, ""),
		p("invalid UTF-8 text (read as U+FFFD)", "{\"namespace\":\"a\",\"text\":\"x\xff\"}", 201, ""),

		u("unknown field", "/v1/memories/alice/m1", `{"txt":"x"}`, 400, KindInvalid),
		u("nothing to update", "/v1/memories/alice/m1", `{}`, 422, KindValidation),
		u("empty text", "/v1/memories/alice/m1", `{"text":""}`, 422, KindValidation),
		u("metadata object", "/v1/memories/alice/m1", `{"metadata":{"k":{}}}`, 422, KindValidation),
		u("unknown id", "/v1/memories/alice/nope", `{"text":"x"}`, 404, KindNotFound),
		u("id traversal", "/v1/memories/alice/..%2Fm1", `{"text":"x"}`, 422, KindValidation),
		u("vector without index", "/v1/memories/alice/m1", `{"vector":[1,2]}`, 422, KindValidation),
		u("metadata set and removed (accepted)", "/v1/memories/alice/m1", `{"metadata":{"k":1,"gone":null}}`, 200, ""),
		s("filters: condition without a test", `{"namespace":"alice","query":"q","filters":{"must":[{"key":"k"}]}}`, 422, KindValidation),
		s("filters: unknown field", `{"namespace":"alice","query":"q","filters":{"must":[{"key":"k","matches":{"value":1}}]}}`, 400, KindInvalid),
		s("filters: object value", `{"namespace":"alice","query":"q","filters":{"must":[{"key":"k","match":{"value":{"a":1}}}]}}`, 422, KindValidation),
		s("filters: bad time", `{"namespace":"alice","query":"q","filters":{"must":[{"key":"time","range":{"gte":"yesterday"}}]}}`, 422, KindValidation),
		s("filters: not an object", `{"namespace":"alice","query":"q","filters":[1]}`, 422, KindValidation),
		s("prefer without filters", `{"namespace":"alice","query":"q","prefer":{"weight":0.2}}`, 422, KindValidation),
		s("prefer empty filters", `{"namespace":"alice","query":"q","prefer":{"filters":{}}}`, 422, KindValidation),
		s("prefer weight 0", `{"namespace":"alice","query":"q","prefer":{"filters":{"must":[{"key":"source","match":{"value":"x"}}]},"weight":0}}`, 422, KindValidation),
		s("prefer (accepted)", `{"namespace":"alice","query":"paris","prefer":{"filters":{"must":[{"key":"source","match":{"value":"x"}}]}}}`, 200, ""),
		s("filters: match (accepted)", `{"namespace":"alice","query":"paris","filters":{"must":[{"key":"kind","match":{"any":["fact",1,true]}}]}}`, 200, ""),
		g("list: filter not JSON", "GET", "/v1/memories/alice?filter=%7B", 400, KindInvalid),
		g("list: filter with a bad condition", "GET", "/v1/memories/alice?filter=%7B%22must%22%3A%5B%7B%7D%5D%7D", 422, KindValidation),
		s("malformed JSON", `{"namespace":"alice","query":`, 400, KindInvalid),
		s("empty query", `{"namespace":"alice","query":""}`, 400, KindInvalid),
		s("whitespace query", `{"namespace":"alice","query":"\t \n"}`, 400, KindInvalid),
		s("query number", `{"namespace":"alice","query":1}`, 422, KindValidation),
		s("missing namespace", `{"query":"q"}`, 422, KindValidation),
		s("namespace with /", `{"namespace":"alice/../bob","query":"q"}`, 422, KindValidation),
		s("namespace ..", `{"namespace":"..","query":"q"}`, 422, KindValidation),
		s("top_k negative", `{"namespace":"alice","query":"q","top_k":-1}`, 422, KindValidation),
		s("top_k zero", `{"namespace":"alice","query":"q","top_k":0}`, 422, KindValidation),
		s("top_k 1e400", `{"namespace":"alice","query":"q","top_k":1e400}`, 422, KindValidation),
		s("top_k 2^63", `{"namespace":"alice","query":"q","top_k":9223372036854775808}`, 422, KindValidation),
		s("top_k 2^63-1", `{"namespace":"alice","query":"q","top_k":9223372036854775807}`, 422, KindValidation),
		s("depth zero", `{"namespace":"alice","query":"q","depth":0}`, 422, KindValidation),
		s("rerank_depth over max documents", `{"namespace":"alice","query":"q","rerank_depth":1001}`, 422, KindValidation),
		s("rerank string", `{"namespace":"alice","query":"q","rerank":"yes"}`, 422, KindValidation),
		s("threshold 2", `{"namespace":"alice","query":"q","threshold":2}`, 422, KindValidation),
		s("threshold without rerank (relative fused score)", `{"namespace":"alice","query":"paris","threshold":0.01}`, 422, KindValidation),
		s("threshold with rerank", `{"namespace":"alice","query":"paris","rerank":true,"threshold":0.01}`, 200, ""),
		s("unknown mode", `{"namespace":"alice","query":"q","mode":"../x"}`, 422, KindValidation),
		s("vector without index", `{"namespace":"alice","query":"q","vector":[1,2]}`, 422, KindValidation),
		s("recency half_life negative", `{"namespace":"alice","query":"q","recency":{"half_life":"-1h"}}`, 422, KindValidation),
		s("recency half_life garbage", `{"namespace":"alice","query":"q","recency":{"half_life":"9999999999999h"}}`, 422, KindValidation),
		s("recency now not a time", `{"namespace":"alice","query":"q","recency":{"now":"soon"}}`, 422, KindValidation),
		s("mmr window negative", `{"namespace":"alice","query":"q","mmr":{"window":-5}}`, 422, KindValidation),
		s("mmr lambda 1e400", `{"namespace":"alice","query":"q","mmr":{"lambda":1e400}}`, 422, KindValidation),
		s("fusion rrf_k negative", `{"namespace":"alice","query":"q","fusion":{"method":"rrf","rrf_k":-1}}`, 422, KindValidation),
		s("deep nesting", strings.Repeat(`[`, 100_000), 400, KindInvalid),
		s("10 MB query", `{"namespace":"alice","query":"`+strings.Repeat("q", 10<<20)+`"}`, 413, KindTooLarge),
		s("wrong content type", okSearch, 415, KindMediaType).withCtype("application/xml"),
		s("unknown field: treshold (refused)", `{"namespace":"alice","query":"paris","treshold":0.99}`, 400, KindInvalid),
		s("unknown field: limit (refused)", `{"namespace":"alice","query":"paris","limit":3}`, 400, KindInvalid),
		s("unknown nested field (refused)", `{"namespace":"alice","query":"paris","recency":{"halflife":"1h"}}`, 400, KindInvalid),
		s("invalid UTF-8 query (read as U+FFFD)", "{\"namespace\":\"alice\",\"query\":\"paris\xff\"}", 200, ""),
		s("NUL in query", `{"namespace":"alice","query":"paris\u0000"}`, 200, ""),
		s("unknown namespace (empty result)", `{"namespace":"nobody","query":"paris"}`, 200, ""),

		// Path segments are percent-decoded once, after routing, then
		// validated: an encoded separator stays inside its segment.
		g("get: encoded letters (decoded)", "GET", "/v1/memories/%61lice/m%31", 200, ""),
		g("list: encoded colon (decoded, unknown namespace)", "GET", "/v1/memories/alice%3Awork", 200, ""),
		g("list: namespace ..", "GET", "/v1/memories/..", 422, KindValidation),
		g("list: namespace %2E%2E", "GET", "/v1/memories/%2E%2E", 422, KindValidation),
		g("list: namespace with space", "GET", "/v1/memories/a%20b", 422, KindValidation),
		g("list: namespace with NUL", "GET", "/v1/memories/a%00b", 422, KindValidation),
		g("list: namespace invalid UTF-8", "GET", "/v1/memories/a%FF", 422, KindValidation),
		g("list: namespace with backslash", "GET", "/v1/memories/a%5Cb", 422, KindValidation),
		g("list: namespace 129 bytes", "GET", "/v1/memories/"+strings.Repeat("n", 129), 422, KindValidation),
		g("list: limit negative", "GET", "/v1/memories/alice?limit=-1", 422, KindValidation),
		g("list: limit text", "GET", "/v1/memories/alice?limit=ten", 422, KindValidation),
		g("list: limit 1e3", "GET", "/v1/memories/alice?limit=1e3", 422, KindValidation),
		g("list: limit 2^63", "GET", "/v1/memories/alice?limit=9223372036854775808", 422, KindValidation),
		g("list: limit over max", "GET", "/v1/memories/alice?limit=1001", 422, KindValidation),
		g("list: after traversal", "GET", "/v1/memories/alice?after=..%2F..%2Fetc", 422, KindValidation),
		g("list: unknown namespace (empty list)", "GET", "/v1/memories/nobody", 200, ""),
		g("get: id ..%2F..%2Fetc", "GET", "/v1/memories/alice/..%2F..%2Fetc", 422, KindValidation),
		g("get: ../../etc/passwd", "GET", "/v1/memories/alice/../../../etc/passwd", 404, KindNotFound),
		g("get: ns %2F id", "GET", "/v1/memories/alice%2Fm1/x", 422, KindValidation),
		g("get: ns %2F (one segment)", "GET", "/v1/memories/alice%2Fm1", 422, KindValidation),
		g("get: id with NUL", "GET", "/v1/memories/alice/m1%00", 422, KindValidation),
		g("get: id with %25", "GET", "/v1/memories/alice/m%251", 422, KindValidation),
		g("get: id .hidden", "GET", "/v1/memories/alice/.m1", 422, KindValidation),
		g("get: namespace :: (allowed chars, empty)", "GET", "/v1/memories/a::b/m1", 404, KindNotFound),
		g("get: unknown id", "GET", "/v1/memories/alice/nope", 404, KindNotFound),
		g("get: extra path segment", "GET", "/v1/memories/alice/m1/x", 404, KindNotFound),
		g("delete: id traversal", "DELETE", "/v1/memories/alice/..%2Fm1", 422, KindValidation),
		g("delete: namespace separator", "DELETE", "/v1/memories/a%5Cb/m1", 422, KindValidation),
		g("delete: unknown id", "DELETE", "/v1/memories/alice/nope", 404, KindNotFound),
		g("forget: namespace traversal", "DELETE", "/v1/memories/..", 422, KindValidation),
		g("forget: namespace never written (0 deleted)", "DELETE", "/v1/memories/nobody", 200, ""),
		g("PUT memory (GET, PATCH and DELETE only)", "PUT", "/v1/memories/alice/m1", 405, KindMethod),
		g("PUT namespace (GET and DELETE only)", "PUT", "/v1/memories/alice", 405, KindMethod),
		g("PATCH without a body", "PATCH", "/v1/memories/alice/m1", 400, KindInvalid),
		g("POST namespaces (GET only)", "POST", "/v1/namespaces", 405, KindMethod),
		g("lowercase delete", "delete", "/v1/memories/alice/m1", 405, KindMethod),
		g("OPTIONS memories (POST only)", "OPTIONS", "/v1/memories", 405, KindMethod),
		g("HEAD memory", "HEAD", "/v1/memories/alice/m1", 200, ""),
		g("GET search (POST only)", "GET", "/v1/search", 405, KindMethod),
		g("no such route", "GET", "/v1/nothing", 404, KindNotFound),
	}
}

func (c badCase) withCtype(ct string) badCase { c.ctype = ct; return c }

// startBad runs the lexical backend with the memory API and a short read
// timeout, with namespace alice holding m1.
func startBad(t *testing.T) string {
	t.Helper()
	cfg := DefaultConfig()
	cfg.ReadTimeout = 2 * time.Second
	base := startMemory(t, cfg, scoring.NewLexical(lexical.Default()), retrieval.DefaultConfig())
	if r := postJSON(t, base+"/v1/memories", `{"namespace":"alice","id":"m1","text":"Alice moved to Paris in May"}`); r.code != 201 {
		t.Fatalf("seed: %d %s", r.code, r.body)
	}
	return base
}

// TestBadInputCatalogue sends every catalogue entry to its endpoints and
// checks the documented status and JSON error body; afterwards the server
// still answers valid requests correctly.
func TestBadInputCatalogue(t *testing.T) {
	base := startBad(t)
	client := &http.Client{Timeout: 20 * time.Second}
	n := 0
	run := func(t *testing.T, c badCase, path string) {
		t.Helper()
		n++
		r := send(t, client, c, base+path)
		checkBad(t, c, r)
	}
	for _, p := range []string{"/rerank", "/v1/rerank", "/v2/rerank"} {
		for _, c := range rerankCatalogue() {
			t.Run(p+"/"+c.name, func(t *testing.T) { run(t, c, p) })
		}
	}
	for _, p := range []string{"/health", "/ready", "/info", "/metrics", "/openapi.json"} {
		for _, c := range getCatalogue(p) {
			path := c.path
			if path == "" {
				path = p
			}
			t.Run(p+"/"+c.name, func(t *testing.T) { run(t, c, path) })
		}
	}
	for _, c := range memoryCatalogue() {
		t.Run(c.name, func(t *testing.T) { run(t, c, c.path) })
	}
	t.Logf("%d catalogue requests", n)
	checkStillServing(t, base)
}

// send issues c; a plain net/http client keeps lowercase methods as sent.
func send(t *testing.T, client *http.Client, c badCase, url string) response {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.ctype != "" {
		req.Header.Set("Content-Type", c.ctype)
	}
	for i := 0; i+1 < len(c.hdr); i += 2 {
		if c.hdr[i] == "Host" {
			req.Host = c.hdr[i+1] // net/http sends req.Host, not a Host header
			continue
		}
		req.Header.Set(c.hdr[i], c.hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, b, resp.Header}
}

func checkBad(t *testing.T, c badCase, r response) {
	t.Helper()
	short := r.body
	if len(short) > 300 {
		short = append(short[:300:300], "..."...)
	}
	if r.code != c.code {
		t.Errorf("status %d, want %d; body %s", r.code, c.code, short)
	}
	if c.method == http.MethodHead {
		if len(r.body) != 0 {
			t.Errorf("HEAD answered with a body: %s", short)
		}
		return
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") && !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("content type %q", r.header.Get("Content-Type"))
	}
	if c.kind == "" {
		if r.code >= 400 {
			t.Errorf("want acceptance, got %d %s", r.code, short)
		}
		return
	}
	var e api.Error
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error == "" || e.Message != e.Error {
		t.Errorf("body %s: not the JSON error shape, message equal to error (%v)", short, err)
	}
	// A method the server knows, on a route that lacks it, names the
	// route's methods; an unknown method has no route to ask.
	known := map[string]bool{http.MethodGet: true, http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true,
		http.MethodDelete: true, http.MethodOptions: true}
	if c.kind == KindMethod && known[c.method] && r.header.Get("Allow") == "" {
		t.Errorf("405 without Allow")
	}
	for _, p := range msgcheck.Problems(e.Error) {
		t.Errorf("message %q: %s", e.Error, p)
	}
	if e.ErrorType != string(c.kind) {
		t.Errorf("error_type %q (%s), want %q", e.ErrorType, e.Error, c.kind)
	}
	if len(r.body) > 4096 {
		t.Errorf("error body is %d bytes: it should not echo the input", len(r.body))
	}
}

// checkStillServing asserts a valid request on every endpoint gets the
// right answer.
func checkStillServing(t *testing.T, base string) {
	t.Helper()
	r := postJSON(t, base+"/rerank", okRerank)
	var rr api.RerankResponse
	decodeInto(t, r, &rr)
	if r.code != 200 || len(rr.Results) != 2 || rr.Results[0].Index != 0 || rr.Results[0].RelevanceScore <= rr.Results[1].RelevanceScore {
		t.Fatalf("rerank after the catalogue: %d %s", r.code, r.body)
	}
	for _, p := range []string{"/health", "/ready", "/info", "/metrics", "/openapi.json"} {
		if r := do(t, http.MethodGet, base+p, "", ""); r.code != 200 {
			t.Fatalf("%s after the catalogue: %d %s", p, r.code, r.body)
		}
	}
	r = postJSON(t, base+"/v1/search", okSearch)
	var sr api.SearchResponse
	decodeInto(t, r, &sr)
	if r.code != 200 || len(sr.Results) == 0 || sr.Results[0].ID != "m1" || sr.Results[0].Namespace != "alice" {
		t.Fatalf("search after the catalogue: %d %s", r.code, r.body)
	}
	r = do(t, http.MethodGet, base+"/v1/memories/alice/m1", "", "")
	var m api.Memory
	decodeInto(t, r, &m)
	if r.code != 200 || m.Text != "Alice moved to Paris in May" {
		t.Fatalf("get after the catalogue: %d %s", r.code, r.body)
	}
}

// rawExchange writes the request bytes (pausing `every` between chunks of
// `chunk` bytes when set) and reads the first response; ok is false when
// the server closed the connection without one. took is when the answer
// (or the close) came.
func rawExchange(t *testing.T, addr string, req []byte, chunk int, every time.Duration) (r response, ok bool, took time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = conn.SetDeadline(start.Add(15 * time.Second))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if chunk <= 0 {
			_, _ = conn.Write(req)
			return
		}
		for i := 0; i < len(req); i += chunk {
			if _, err := conn.Write(req[i:min(i+chunk, len(req))]); err != nil {
				return // the server cut us off
			}
			time.Sleep(every)
		}
	}()
	defer func() { _ = conn.Close(); <-done }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	took = time.Since(start)
	if err != nil {
		return response{}, false, took
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, b, resp.Header}, true, took
}

// TestBadInputRaw: inputs a well-behaved HTTP client cannot send.
// Slow-loris clients are cut by ReadTimeout (2 s here).
func TestBadInputRaw(t *testing.T) {
	base := startBad(t)
	addr := strings.TrimPrefix(base, "http://")
	body := okRerank
	post := func(path, extra, b string) []byte {
		return []byte(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s", path, len(b), extra, b))
	}
	cases := []struct {
		name  string
		req   []byte
		chunk int
		every time.Duration
		code  int  // 0: the server may just close the connection
		kind  Kind // when code != 0
		cut   bool // must end within ReadTimeout + slack, not when the client finishes
	}{
		{name: "slow-loris body, 1 byte/s", req: post("/rerank", "", body), chunk: 1, every: time.Second, code: 408, kind: KindTimeout, cut: true},
		{name: "slow-loris memory body", req: post("/v1/memories", "", `{"namespace":"a","text":"slow"}`), chunk: 1, every: time.Second, code: 408, kind: KindTimeout, cut: true},
		{name: "slow-loris headers, 1 byte/s", req: post("/rerank", "X-Slow: "+strings.Repeat("s", 40)+"\r\n", body), chunk: 1, every: 500 * time.Millisecond, cut: true},
		{name: "body shorter than Content-Length", req: post("/rerank", "", body)[:len(post("/rerank", "", body))-10], cut: true},
		{name: "chunked body over the limit", req: []byte("POST /rerank HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
			strings.Repeat(fmt.Sprintf("%x\r\n%s\r\n", 1<<20, strings.Repeat("a", 1<<20)), 9) + "0\r\n\r\n"), code: 413, kind: KindTooLarge},
		{name: "Content-Length 10 MB", req: []byte("POST /rerank HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n{"), code: 413, kind: KindTooLarge},
		{name: "Content-Length 2^63", req: []byte("POST /rerank HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 9223372036854775808\r\n\r\n{}"), code: 400, kind: KindInvalid},
		{name: "Content-Length negative", req: []byte("POST /rerank HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: -5\r\n\r\n{}"), code: 400, kind: KindInvalid},
		{name: "garbage request line", req: []byte("\x00\x01\x02 garbage\r\n\r\n"), code: 405, kind: KindMethod},
		{name: "no HTTP version (read as HTTP/1.0)", req: []byte("GET /health\r\n\r\n"), code: 200},
		{name: "malformed percent-encoding in a path segment", req: []byte("GET /v1/memories/alice/m%ZZ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), code: 422, kind: KindValidation},
		{name: "NUL in path", req: []byte("GET /v1/memories/alice/m\x001 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), code: 404, kind: KindNotFound},
		{name: "invalid UTF-8 in path", req: []byte("GET /v1/memories/\xff\xfe/m1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), code: 422, kind: KindValidation},
		{name: "header without colon", req: []byte("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nbroken header\r\n\r\n"), code: 408, kind: KindTimeout, cut: true},
		{name: "oversized request line", req: []byte("GET /v1/memories/" + strings.Repeat("a", 20<<10) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), code: 431, kind: KindTooLarge},
	}
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				r, ok, took := rawExchange(t, addr, c.req, c.chunk, c.every)
				if c.cut && took > 5*time.Second {
					t.Errorf("connection held %v: not cut by the 2 s ReadTimeout", took)
				}
				switch {
				case c.code == 0 && !ok: // closed without an answer: fine
				case c.code == 0:
					checkBad(t, badCase{code: r.code, kind: Kind(errorType(r.body))}, r)
					if r.code < 400 {
						t.Errorf("answered %d %s", r.code, r.body)
					}
				case !ok:
					t.Fatal("no HTTP response")
				default:
					checkBad(t, badCase{code: c.code, kind: c.kind}, r)
				}
			})
		}
	})
	checkStillServing(t, base)
}

func errorType(b []byte) string {
	var e api.Error
	_ = json.Unmarshal(b, &e)
	return e.ErrorType
}
