package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Kind is the type of a metadata value.
type Kind uint8

// Metadata value kinds. The zero Kind is no value: a key whose value is
// JSON null is absent.
const (
	KindNone Kind = iota
	KindString
	KindNumber
	KindBool
)

func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindNumber:
		return "number"
	case KindBool:
		return "boolean"
	}
	return "null"
}

// Value is one metadata value: a string, a number (a finite float64, as
// JSON numbers are read by JavaScript; integers up to 2^53 are exact) or
// a boolean. Values are comparable with ==.
type Value struct {
	kind Kind
	s    string
	n    float64
	b    bool
}

// String returns a string value.
func String(s string) Value { return Value{kind: KindString, s: s} }

// Number returns a number value; NaN and ±Inf are refused by Validate.
func Number(n float64) Value { return Value{kind: KindNumber, n: n} }

// Bool returns a boolean value.
func Bool(b bool) Value { return Value{kind: KindBool, b: b} }

// Kind returns v's kind.
func (v Value) Kind() Kind { return v.kind }

// Str returns v's string and whether v is a string.
func (v Value) Str() (string, bool) { return v.s, v.kind == KindString }

// Num returns v's number and whether v is a number.
func (v Value) Num() (float64, bool) { return v.n, v.kind == KindNumber }

// Boolean returns v's boolean and whether v is a boolean.
func (v Value) Boolean() (bool, bool) { return v.b, v.kind == KindBool }

// Any returns v as encoding/json reads it into an interface: string,
// float64, bool, or nil for no value.
func (v Value) Any() any {
	switch v.kind {
	case KindString:
		return v.s
	case KindNumber:
		return v.n
	case KindBool:
		return v.b
	}
	return nil
}

// Text is v written as text: a string as is, a number in JSON's shortest
// form, a boolean as true or false ("" for no value).
func (v Value) Text() string {
	switch v.kind {
	case KindString:
		return v.s
	case KindNumber:
		return strconv.FormatFloat(v.n, 'g', -1, 64)
	case KindBool:
		return strconv.FormatBool(v.b)
	}
	return ""
}

// MarshalJSON writes v as a JSON string, number or boolean (null for no
// value).
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.kind {
	case KindString:
		return json.Marshal(v.s)
	case KindNumber:
		if math.IsNaN(v.n) || math.IsInf(v.n, 0) {
			return nil, fmt.Errorf("metadata number %v is not finite", v.n)
		}
		return json.Marshal(v.n)
	case KindBool:
		return json.Marshal(v.b)
	}
	return []byte("null"), nil
}

// ErrValueType is returned by UnmarshalJSON for a JSON object or array.
var ErrValueType = errors.New("a metadata value must be a string, a number, a boolean or null")

// UnmarshalJSON reads a JSON string, number, boolean or null (no value);
// an object or an array is ErrValueType.
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ErrValueType
	}
	switch b[0] {
	case 'n':
		*v = Value{}
		return nil
	case 't', 'f':
		var x bool
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		*v = Bool(x)
		return nil
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = String(s)
		return nil
	case '{', '[':
		return ErrValueType
	}
	n, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(n, 0) {
		return fmt.Errorf("metadata number %.32s is out of range", b)
	}
	*v = Number(n)
	return nil
}

// Metadata is a memory's optional typed key/value data.
type Metadata map[string]Value

// Strings returns m's values as metadata strings (nil for nil).
func Strings(m map[string]string) Metadata {
	if m == nil {
		return nil
	}
	out := make(Metadata, len(m))
	for k, v := range m {
		out[k] = String(v)
	}
	return out
}

// FromAny converts decoded JSON values (string, float64, bool, nil, and
// the integer types a Go caller may use) to Metadata; nil drops the key.
// Any other type (an object, a list) is an error naming its key; every
// bad key is reported at once.
func FromAny(m map[string]any) (Metadata, error) {
	if m == nil {
		return nil, nil
	}
	out := make(Metadata, len(m))
	var errs []error
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch x := m[k].(type) {
		case nil:
		case string:
			out[k] = String(x)
		case bool:
			out[k] = Bool(x)
		case float64:
			out[k] = Number(x)
		case float32:
			out[k] = Number(float64(x))
		case int:
			out[k] = Number(float64(x))
		case int64:
			out[k] = Number(float64(x))
		case json.Number:
			n, err := x.Float64()
			if err != nil {
				errs = append(errs, fmt.Errorf("metadata %q: number %s out of range", truncate(k), x))
				continue
			}
			out[k] = Number(n)
		default:
			errs = append(errs, fmt.Errorf("metadata %q: %w, not %s", truncate(k), ErrValueType, jsonKind(x)))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return out, nil
}

// ToAny is the inverse of FromAny (nil for nil).
func (m Metadata) ToAny() map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if v.kind != KindNone {
			out[k] = v.Any()
		}
	}
	return out
}

func jsonKind(x any) string {
	switch x.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("a %T", x)
}

// String writes v as JSON: a quoted string, a number, true, false, null.
func (v Value) String() string {
	b, err := v.MarshalJSON()
	if err != nil {
		return fmt.Sprint(v.n)
	}
	return string(b)
}
