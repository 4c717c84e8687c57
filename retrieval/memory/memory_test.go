package memory

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func valid() Memory {
	return Memory{
		ID: "m-1", Namespace: "agent:alice", Text: "likes tea",
		Time: time.Unix(1700000000, 0).UTC(), Source: "/home/alice/proj",
		Metadata: Strings(map[string]string{"k": "v"}),
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Memory)
		wantErr []string // substrings; nil means valid
	}{
		{"valid", func(*Memory) {}, nil},
		{"valid colon dot underscore", func(m *Memory) { m.Namespace = "a.b_c:d-E9" }, nil},
		{"valid schema 1", func(m *Memory) { m.SchemaVersion = 1 }, nil},
		{"empty namespace", func(m *Memory) { m.Namespace = "" }, []string{"namespace", "empty"}},
		{"slash namespace", func(m *Memory) { m.Namespace = "a/b" }, []string{"namespace", "not in"}},
		{"backslash namespace", func(m *Memory) { m.Namespace = `a\b` }, []string{"namespace"}},
		{"NUL namespace", func(m *Memory) { m.Namespace = "a\x00b" }, []string{"namespace"}},
		{"dotdot namespace", func(m *Memory) { m.Namespace = "a..b" }, []string{`".."`}},
		{"leading dot namespace", func(m *Memory) { m.Namespace = ".hidden" }, []string{"starts with '.'"}},
		{"long namespace", func(m *Memory) { m.Namespace = strings.Repeat("a", 129) }, []string{"129 bytes"}},
		{"max namespace", func(m *Memory) { m.Namespace = strings.Repeat("a", 128) }, nil},
		{"space namespace", func(m *Memory) { m.Namespace = "a b" }, []string{"namespace"}},
		{"empty id", func(m *Memory) { m.ID = "" }, []string{"id", "empty"}},
		{"slash id", func(m *Memory) { m.ID = "../x" }, []string{"id"}},
		{"empty text", func(m *Memory) { m.Text = "" }, []string{"text is empty"}},
		{"bad utf8 text", func(m *Memory) { m.Text = "\xff" }, []string{"UTF-8"}},
		{"huge text", func(m *Memory) { m.Text = strings.Repeat("x", MaxTextLen+1) }, []string{"text is"}},
		{"empty meta key", func(m *Memory) { m.Metadata = Strings(map[string]string{"": "v"}) }, []string{"metadata key"}},
		{"long meta value", func(m *Memory) {
			m.Metadata = Strings(map[string]string{"k": strings.Repeat("v", MaxMetadataValLen+1)})
		}, []string{"metadata value"}},
		{"bad schema", func(m *Memory) { m.SchemaVersion = CurrentSchema + 1 }, []string{"schema version"}},
		{"year 10000", func(m *Memory) { m.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, []string{"outside years"}},
		{"year -1", func(m *Memory) { m.Time = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) }, []string{"outside years"}},
		{"year 9999", func(m *Memory) { m.Time = time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC) }, nil},
		{"zero time", func(m *Memory) { m.Time = time.Time{} }, nil},
		{"long source", func(m *Memory) { m.Source = strings.Repeat("s", MaxSourceLen+1) }, []string{"source"}},
		{"all at once", func(m *Memory) { *m = Memory{SchemaVersion: -1} },
			[]string{"namespace", "id", "text is empty", "schema version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := valid()
			tt.mutate(&m)
			err := m.Validate()
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate() = nil, want error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q missing %q", err, want)
				}
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	if got := (Memory{}).Normalize().SchemaVersion; got != CurrentSchema {
		t.Fatalf("Normalize schema = %d, want %d", got, CurrentSchema)
	}
}
