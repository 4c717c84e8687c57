// Package filter selects memories by their fields and metadata: the
// filters of a memory search and of a namespace listing. The shape is
// Qdrant's payload filter (must / should / must_not of conditions, each a
// match, a range, an is_empty or a nested filter), so that a client
// written for Qdrant's or a mem0-on-Qdrant filter needs no new concepts.
//
// A Filter is compiled once per request (Compile validates it, reporting
// every problem at once) into a Matcher, which says whether one memory
// matches, and names its top-level equalities (Equalities) and ranges
// (Intervals). The indexes (retrieval/index) build an allow-list from the
// memories the most selective of those selects, or from every memory,
// before any stage cuts its candidates, so a search returns the k best
// matching memories whenever k match.
//
// Keys: "time", "source" and "id" are the memory's own fields;
// "metadata.K" is metadata key K; any other key is a metadata key too
// (so "kind" and "metadata.kind" are the same).
package filter

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// ErrInvalid wraps every error of Compile.
var ErrInvalid = errors.New("invalid filter")

// Limits on one filter, so that a request cannot make matching costly.
const (
	MaxConditions = 64 // conditions in the whole filter, nested ones included
	MaxDepth      = 4  // nesting of filters
	MaxValues     = 256
)

// Filter is Qdrant's filter: every Must condition, at least one Should
// condition (when there are any) and no MustNot condition.
type Filter struct {
	Must    []Condition
	Should  []Condition
	MustNot []Condition
}

// Condition is one test: exactly one of Match, Range, IsEmpty (each with
// Key, IsEmpty's its own) or Nested.
type Condition struct {
	Key     string
	Match   *Match
	Range   *Range
	IsEmpty string // the key that must be absent (Qdrant's is_empty.key)
	Nested  *Filter
}

// Match is equality: Value (the key equals it), Any (equals one of them:
// "in") or Except (equals none of them, or is absent: "not in"). Values
// are strings, float64 numbers or booleans; a string never equals a
// number.
type Match struct {
	Value  any
	Any    []any
	Except []any
}

// Range bounds a number or a time: each bound a float64, or an RFC 3339
// string for "time" (and for metadata strings holding times).
type Range struct {
	GT, GTE, LT, LTE any
}

// Fields are what a filter reads of one memory.
type Fields struct {
	ID       string
	Time     time.Time
	Source   string
	Metadata memory.Metadata
}

// Of returns m's fields.
func Of(m memory.Memory) Fields {
	return Fields{ID: m.ID, Time: m.Time, Source: m.Source, Metadata: m.Metadata}
}

// Matcher is a compiled Filter.
type Matcher struct {
	root node
	eq   []Equality
	iv   []Interval
}

// Equality is a top-level equality condition on a metadata key or the
// source (Key "source"): a memory matches the filter only if its value is
// one of Values. The indexes start from the memories holding one of them
// rather than from every memory.
type Equality struct {
	Key    string // "source", or a metadata key
	Source bool
	Values []memory.Value
}

type node interface{ match(*Fields) bool }

// Compile validates f and returns its Matcher; nil f or an empty filter
// matches everything (Compile returns nil, nil).
func Compile(f *Filter) (*Matcher, error) {
	if f == nil || (len(f.Must) == 0 && len(f.Should) == 0 && len(f.MustNot) == 0) {
		return nil, nil
	}
	c := compiler{}
	root := c.filter(f, "filters", 1)
	if len(c.errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(c.errs...))
	}
	m := &Matcher{root: root}
	for _, cond := range f.Must {
		if cond.Match == nil || cond.Match.Except != nil {
			continue
		}
		k := key(cond.Key)
		if k.field != fieldMeta && k.field != fieldSource {
			continue
		}
		vals := c.values(cond.Match, "")
		m.eq = append(m.eq, Equality{Key: k.meta, Source: k.field == fieldSource, Values: vals})
	}
	for _, cond := range f.Must {
		if cond.Range == nil {
			continue
		}
		// Compiled once more: it was valid, so this reports nothing.
		r, ok := c.rng(key(cond.Key), cond.Range, "").(rangeNode)
		if !ok {
			continue
		}
		iv := Interval{Time: r.k.field == fieldTime, Key: r.k.meta, Lo: r.lo.export(), Hi: r.hi.export()}
		iv.Times = r.lo.isTime || r.hi.isTime
		m.iv = append(m.iv, iv)
	}
	return m, nil
}

// Match reports whether a memory with fields f matches; a nil Matcher
// matches everything.
func (m *Matcher) Match(f Fields) bool { return m.MatchPtr(&f) }

// MatchPtr is Match without copying f (an allow-list over every memory of
// a namespace calls it once per memory).
func (m *Matcher) MatchPtr(f *Fields) bool {
	if m == nil {
		return true
	}
	return m.root.match(f)
}

// Equalities are the filter's top-level equality conditions (see
// Equality); nil when it has none.
func (m *Matcher) Equalities() []Equality {
	if m == nil {
		return nil
	}
	return m.eq
}

// Interval is a top-level range condition on the memory's time or on a
// metadata key: a memory matches the filter only if the key's value lies
// in it. The indexes read the memories in it from a sorted index rather
// than every memory. Numbers are compared as numbers; times (the time
// field, and metadata strings that ParseTime reads) as instants.
type Interval struct {
	Time   bool   // the memory's time field; else the metadata key Key
	Key    string // a metadata key, when not Time
	Times  bool   // the bounds are times (Bound.T), else numbers (Bound.N)
	Lo, Hi Bound
}

// Bound is one end of an Interval; an unset one does not bound it.
type Bound struct {
	Set    bool
	Strict bool // gt or lt: the bound itself is outside
	N      float64
	T      time.Time
}

// Intervals are the filter's top-level range conditions (see Interval);
// nil when it has none.
func (m *Matcher) Intervals() []Interval {
	if m == nil {
		return nil
	}
	return m.iv
}

// ParseTime reads a metadata string holding a time (RFC 3339): the rule
// by which a range with time bounds reads a metadata value, so that the
// indexes read it alike.
func ParseTime(s string) (time.Time, bool) {
	// Every RFC 3339 time is at least "2006-01-02T15:04:05Z" long, with
	// '-' after the year: most strings are refused without parsing.
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

type field int

const (
	fieldMeta field = iota
	fieldTime
	fieldSource
	fieldID
)

type keyRef struct {
	field field
	meta  string
}

func key(k string) keyRef {
	switch k {
	case "time":
		return keyRef{field: fieldTime}
	case "source":
		return keyRef{field: fieldSource}
	case "id":
		return keyRef{field: fieldID}
	}
	return keyRef{field: fieldMeta, meta: strings.TrimPrefix(k, "metadata.")}
}

// value returns the key's value in f: the memory's time as a string is
// not used (ranges read it as a time).
func (k keyRef) value(f *Fields) (memory.Value, bool) {
	switch k.field {
	case fieldSource:
		return memory.String(f.Source), f.Source != ""
	case fieldID:
		return memory.String(f.ID), true
	case fieldTime:
		return memory.Value{}, !f.Time.IsZero()
	}
	v, ok := f.Metadata[k.meta]
	return v, ok && v.Kind() != memory.KindNone
}

type compiler struct {
	errs  []error
	conds int
}

func (c *compiler) bad(format string, a ...any) { c.errs = append(c.errs, fmt.Errorf(format, a...)) }

type allOf []node
type anyOf []node
type noneOf []node

func (n allOf) match(f *Fields) bool {
	for _, x := range n {
		if !x.match(f) {
			return false
		}
	}
	return true
}

func (n anyOf) match(f *Fields) bool {
	for _, x := range n {
		if x.match(f) {
			return true
		}
	}
	return len(n) == 0
}

func (n noneOf) match(f *Fields) bool {
	for _, x := range n {
		if x.match(f) {
			return false
		}
	}
	return true
}

func (c *compiler) filter(f *Filter, at string, depth int) node {
	if depth > MaxDepth {
		c.bad("%s: filters nested deeper than %d", at, MaxDepth)
		return allOf{}
	}
	var out allOf
	list := func(conds []Condition, name string) []node {
		ns := make([]node, 0, len(conds))
		for i, cond := range conds {
			ns = append(ns, c.cond(cond, fmt.Sprintf("%s.%s[%d]", at, name, i), depth))
		}
		return ns
	}
	if len(f.Must) > 0 {
		out = append(out, allOf(list(f.Must, "must")))
	}
	if len(f.Should) > 0 {
		out = append(out, anyOf(list(f.Should, "should")))
	}
	if len(f.MustNot) > 0 {
		out = append(out, noneOf(list(f.MustNot, "must_not")))
	}
	return out
}

func (c *compiler) cond(cond Condition, at string, depth int) node {
	c.conds++
	if c.conds == MaxConditions+1 {
		c.bad("%s: more than %d conditions in one filter", at, MaxConditions)
	}
	n := 0
	for _, set := range []bool{cond.Match != nil, cond.Range != nil, cond.IsEmpty != "", cond.Nested != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		c.bad("%s: want exactly one of match, range, is_empty or a nested filter (must, should, must_not)", at)
		return allOf{}
	}
	if cond.Nested != nil {
		if cond.Key != "" {
			c.bad("%s: a nested filter has no key", at)
		}
		return c.filter(cond.Nested, at, depth+1)
	}
	if cond.IsEmpty != "" {
		if cond.Key != "" {
			c.bad("%s: is_empty names its key inside (\"is_empty\": {\"key\": ...})", at)
		}
		c.checkKey(cond.IsEmpty, at+".is_empty.key")
		k := key(cond.IsEmpty)
		return emptyNode{k}
	}
	if cond.Key == "" {
		c.bad("%s: key is missing", at)
		return allOf{}
	}
	c.checkKey(cond.Key, at+".key")
	k := key(cond.Key)
	if cond.Match != nil {
		return c.match(k, cond.Match, at+".match")
	}
	return c.rng(k, cond.Range, at+".range")
}

func (c *compiler) checkKey(k, at string) {
	m := key(k)
	if m.field == fieldMeta && (m.meta == "" || len(m.meta) > memory.MaxMetadataKeyLen) {
		c.bad("%s %q: a metadata key is 1..%d bytes", at, trunc(k), memory.MaxMetadataKeyLen)
	}
}

// emptyNode is is_empty: the key is absent (or null).
type emptyNode struct{ k keyRef }

func (n emptyNode) match(f *Fields) bool { _, ok := n.k.value(f); return !ok }

type matchNode struct {
	k      keyRef
	vals   []memory.Value
	except bool
}

func (n matchNode) match(f *Fields) bool {
	v, ok := n.k.value(f)
	if !ok {
		return n.except
	}
	for _, w := range n.vals {
		if v == w {
			return !n.except
		}
	}
	return n.except
}

func (c *compiler) match(k keyRef, m *Match, at string) node {
	set := 0
	for _, b := range []bool{m.Value != nil, m.Any != nil, m.Except != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		c.bad("%s: want exactly one of value, any or except", at)
		return allOf{}
	}
	if k.field == fieldTime {
		c.bad("%s: time is matched by a range (gte, lt...), not by equality", at)
		return allOf{}
	}
	vals := c.values(m, at)
	return matchNode{k: k, vals: vals, except: m.Except != nil}
}

// values converts a Match's values, reporting bad ones when at is set.
func (c *compiler) values(m *Match, at string) []memory.Value {
	raw := m.Any
	name := "any"
	switch {
	case m.Value != nil:
		raw, name = []any{m.Value}, "value"
	case m.Except != nil:
		raw, name = m.Except, "except"
	}
	if at != "" && len(raw) > MaxValues {
		c.bad("%s.%s: %d values, at most %d", at, name, len(raw), MaxValues)
	}
	out := make([]memory.Value, 0, len(raw))
	for i, r := range raw {
		v, err := valueOf(r)
		if err != nil {
			if at != "" {
				c.bad("%s.%s[%d]: %v", at, name, i, err)
			}
			continue
		}
		out = append(out, v)
	}
	return out
}

func valueOf(x any) (memory.Value, error) {
	switch v := x.(type) {
	case string:
		return memory.String(v), nil
	case bool:
		return memory.Bool(v), nil
	case float64:
		return memory.Number(v), nil
	case int:
		return memory.Number(float64(v)), nil
	}
	return memory.Value{}, fmt.Errorf("want a string, a number or a boolean, not %s", kindOf(x))
}

func kindOf(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", x)
}

// bound is one side of a range: a number or a time.
type bound struct {
	set    bool
	isTime bool
	n      float64
	t      time.Time
	strict bool
}

func (b bound) export() Bound { return Bound{Set: b.set, Strict: b.strict, N: b.n, T: b.t} }

type rangeNode struct {
	k      keyRef
	lo, hi bound
}

func (n rangeNode) match(f *Fields) bool {
	var x float64
	var t time.Time
	isTime := false
	switch n.k.field {
	case fieldTime:
		if f.Time.IsZero() {
			return false
		}
		t, isTime = f.Time, true
	default:
		v, ok := n.k.value(f)
		if !ok {
			return false
		}
		if num, ok := v.Num(); ok {
			x = num
		} else if s, ok := v.Str(); ok {
			pt, ok := ParseTime(s)
			if !ok {
				return false
			}
			t, isTime = pt, true
		} else {
			return false
		}
	}
	bounds := n.lo
	if !bounds.set {
		bounds = n.hi
	}
	if bounds.isTime != isTime {
		return false
	}
	if n.lo.set {
		c := cmpAt(isTime, x, t, n.lo)
		if c < 0 || (c == 0 && n.lo.strict) {
			return false
		}
	}
	if n.hi.set {
		c := cmpAt(isTime, x, t, n.hi)
		if c > 0 || (c == 0 && n.hi.strict) {
			return false
		}
	}
	return true
}

// cmpAt compares the value (x or t) with b: -1, 0, +1.
func cmpAt(isTime bool, x float64, t time.Time, b bound) int {
	if isTime {
		return t.Compare(b.t)
	}
	switch {
	case x < b.n:
		return -1
	case x > b.n:
		return 1
	}
	return 0
}

func (c *compiler) rng(k keyRef, r *Range, at string) node {
	if k.field == fieldSource || k.field == fieldID {
		c.bad("%s: %s is matched by equality, not by a range", at, map[field]string{fieldSource: "source", fieldID: "id"}[k.field])
		return allOf{}
	}
	conv := func(x any, name string, strict bool) bound {
		if x == nil {
			return bound{}
		}
		b := bound{set: true, strict: strict}
		switch v := x.(type) {
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				c.bad("%s.%s: not a finite number", at, name)
			}
			b.n = v
		case int:
			b.n = float64(v)
		case string:
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				c.bad("%s.%s %q: want a number or an RFC 3339 time (2025-01-31T00:00:00Z)", at, name, trunc(v))
			}
			b.isTime, b.t = true, t
		default:
			c.bad("%s.%s: want a number or an RFC 3339 time string, not %s", at, name, kindOf(x))
		}
		return b
	}
	if r.GT != nil && r.GTE != nil {
		c.bad("%s: gt and gte both given", at)
	}
	if r.LT != nil && r.LTE != nil {
		c.bad("%s: lt and lte both given", at)
	}
	lo := conv(r.GTE, "gte", false)
	if r.GT != nil {
		lo = conv(r.GT, "gt", true)
	}
	hi := conv(r.LTE, "lte", false)
	if r.LT != nil {
		hi = conv(r.LT, "lt", true)
	}
	switch {
	case !lo.set && !hi.set:
		c.bad("%s: want at least one of gt, gte, lt, lte", at)
	case lo.set && hi.set && lo.isTime != hi.isTime:
		c.bad("%s: one bound is a time and the other a number", at)
	case k.field == fieldTime && ((lo.set && !lo.isTime) || (hi.set && !hi.isTime)):
		c.bad("%s: time's bounds are RFC 3339 times (2025-01-31T00:00:00Z)", at)
	}
	return rangeNode{k: k, lo: lo, hi: hi}
}

func trunc(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
