package memory

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// CurrentSchema is the SchemaVersion written by this build. Readers accept
// records with SchemaVersion in 1..CurrentSchema; 0 means "unset" and is
// normalised to CurrentSchema by Normalize.
//
// Version 1 held string metadata only; version 2 (typed metadata) may hold
// numbers and booleans too. A version-1 record reads unchanged (its values
// are strings), so no store needs migrating; a build that knows only
// version 1 refuses a version-2 record by its version rather than
// misreading it.
const CurrentSchema = 2

// Limits enforced by Validate.
const (
	MaxNamespaceLen   = 128     // bytes
	MaxIDLen          = 128     // bytes
	MaxTextLen        = 1 << 20 // bytes (1 MiB)
	MaxSourceLen      = 4096    // bytes
	MaxMetadataKeys   = 64
	MaxMetadataKeyLen = 128  // bytes
	MaxMetadataValLen = 4096 // bytes
)

// ErrInvalid is wrapped by every error returned from Validate.
var ErrInvalid = errors.New("invalid memory")

// Memory is one long-term memory of an agent.
//
// (Namespace, ID) is the primary key: IDs are unique within a namespace only,
// and namespaces never see each other.
type Memory struct {
	// ID identifies the memory within its namespace (safe charset, ≤ 128 bytes).
	ID string `json:"id"`
	// Namespace isolates memories of different agents/projects (safe charset,
	// ≤ 128 bytes, never path-like; see the package documentation).
	Namespace string `json:"namespace"`
	// Text is the memory content: non-empty, valid UTF-8, ≤ 1 MiB.
	Text string `json:"text"`
	// Time is when the memory was formed (used for recency ranking).
	Time time.Time `json:"time"`
	// Source is optional provenance, e.g. a working directory or tool name.
	Source string `json:"source,omitempty"`
	// Metadata is optional typed data (strings, numbers, booleans),
	// bounded in size.
	Metadata Metadata `json:"metadata,omitempty"`
	// SchemaVersion is the record schema; 0 means CurrentSchema.
	SchemaVersion int `json:"schema_version"`
}

// Normalize returns m with defaults filled in (SchemaVersion 0 →
// CurrentSchema) and metadata keys without a value (JSON null) dropped.
func (m Memory) Normalize() Memory {
	if m.SchemaVersion == 0 {
		m.SchemaVersion = CurrentSchema
	}
	for _, v := range m.Metadata {
		if v.Kind() == KindNone {
			md := make(Metadata, len(m.Metadata))
			for k, v := range m.Metadata {
				if v.Kind() != KindNone {
					md[k] = v
				}
			}
			m.Metadata = md
			break
		}
	}
	return m
}

// Validate reports every problem with m at once, joined into one error that
// wraps ErrInvalid. It returns nil when m is valid.
func (m Memory) Validate() error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	// The key checks without their own ErrInvalid prefix: the joined
	// error carries it once.
	if err := validateKey(m.Namespace, MaxNamespaceLen); err != nil {
		add("namespace %q: %w", truncate(m.Namespace), err)
	}
	if err := validateKey(m.ID, MaxIDLen); err != nil {
		add("id %q: %w", truncate(m.ID), err)
	}
	switch {
	case m.Text == "":
		add("text is empty")
	case len(m.Text) > MaxTextLen:
		add("text is %d bytes, max %d", len(m.Text), MaxTextLen)
	case !utf8.ValidString(m.Text):
		add("text is not valid UTF-8")
	}
	if len(m.Source) > MaxSourceLen {
		add("source is %d bytes, max %d", len(m.Source), MaxSourceLen)
	} else if !utf8.ValidString(m.Source) || strings.ContainsRune(m.Source, 0) {
		add("source is not valid UTF-8 or contains NUL")
	}
	if len(m.Metadata) > MaxMetadataKeys {
		add("metadata has %d keys, max %d", len(m.Metadata), MaxMetadataKeys)
	}
	for k, v := range m.Metadata {
		if k == "" || len(k) > MaxMetadataKeyLen || !utf8.ValidString(k) {
			add("metadata key %q: must be 1..%d bytes of valid UTF-8", truncate(k), MaxMetadataKeyLen)
		}
		switch v.Kind() {
		case KindString:
			if len(v.s) > MaxMetadataValLen || !utf8.ValidString(v.s) {
				add("metadata value for %q: must be ≤ %d bytes of valid UTF-8", truncate(k), MaxMetadataValLen)
			}
		case KindNumber:
			if math.IsNaN(v.n) || math.IsInf(v.n, 0) {
				add("metadata value for %q: number %v is not finite", truncate(k), v.n)
			}
		case KindBool:
		default:
			add("metadata value for %q: no value (null is dropped by Normalize)", truncate(k))
		}
	}
	// Every store keeps the time as RFC 3339 text, which has four-digit
	// years: a time outside them could be accepted by none.
	if y := m.Time.Year(); y < 0 || y > 9999 {
		add("time %s is outside years 0000..9999", m.Time.Format(time.RFC3339))
	}
	if m.SchemaVersion < 0 || m.SchemaVersion > CurrentSchema {
		add("schema version %d not in 0..%d", m.SchemaVersion, CurrentSchema)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
}

// ValidateNamespace checks a namespace against the safe-key rules.
func ValidateNamespace(ns string) error {
	if err := validateKey(ns, MaxNamespaceLen); err != nil {
		return fmt.Errorf("%w: namespace %q: %w", ErrInvalid, truncate(ns), err)
	}
	return nil
}

// ValidateID checks a memory ID against the safe-key rules.
func ValidateID(id string) error {
	if err := validateKey(id, MaxIDLen); err != nil {
		return fmt.Errorf("%w: id %q: %w", ErrInvalid, truncate(id), err)
	}
	return nil
}

func validateKey(s string, maxLen int) error {
	switch {
	case s == "":
		return errors.New("is empty")
	case len(s) > maxLen:
		return fmt.Errorf("is %d bytes, max %d", len(s), maxLen)
	case s[0] == '.':
		return errors.New("starts with '.'")
	case strings.Contains(s, ".."):
		return errors.New(`contains ".."`)
	}
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			return fmt.Errorf("byte %d (%q) not in [A-Za-z0-9._:-]", i, s[i])
		}
	}
	return nil
}

func safeByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '-', c == '_', c == '.', c == ':':
		return true
	}
	return false
}

// truncate shortens s for inclusion in error messages.
func truncate(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
