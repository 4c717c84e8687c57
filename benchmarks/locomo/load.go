package locomo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// Load reads a LoCoMo split from path: a directory of .json files (read in
// name order, other files ignored) or a single .json file. Each file may
// hold one conversation in the per-conversation layout (26.json: the
// conversation's fields at the top level next to "qa"), one release sample
// ({sample_id, conversation, qa, ...}) or a list of samples (the official
// locomo10.json); the layout is detected per file. Errors name the file.
func Load(path string) (*Dataset, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("locomo: %w", err)
	}
	var files []string
	if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("locomo: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() && strings.EqualFold(filepath.Ext(e.Name()), ".json") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("locomo: %s: no .json files", path)
		}
	} else {
		files = []string{path}
	}
	var l loader
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("locomo: %w", err)
		}
		if err := l.add(data, f); err != nil {
			return nil, fmt.Errorf("locomo: %w", err)
		}
	}
	return l.dataset(), nil
}

// Decode reads one file's contents, in any layout Load accepts. name is the
// file name: its stem is the conversation ID in the per-conversation
// layout, and errors start with it.
func Decode(data []byte, name string) (*Dataset, error) {
	var l loader
	if err := l.add(data, name); err != nil {
		return nil, fmt.Errorf("locomo: %w", err)
	}
	return l.dataset(), nil
}

type loader struct {
	convs []Conversation
	st    Stats
	from  map[string]string // conversation ID -> file, for duplicates
}

func (l *loader) dataset() *Dataset {
	return &Dataset{Conversations: l.convs, Stats: l.st}
}

// add decodes one file. On error the loader is left unusable.
func (l *loader) add(data []byte, name string) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	switch {
	case bytes.HasPrefix(trimmed, []byte("[")):
		var samples []map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &samples); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for i, s := range samples {
			id, err := sampleID(s, strconv.Itoa(i))
			if err != nil {
				return fmt.Errorf("%s: sample %d: %w", name, i, err)
			}
			if err := l.addSample(s, id, name); err != nil {
				return fmt.Errorf("%s: sample %d (%s): %w", name, i, id, err)
			}
		}
		return nil
	case bytes.HasPrefix(trimmed, []byte("{")):
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		stem := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
		id := stem
		if _, ok := obj["conversation"]; ok {
			var err error
			if id, err = sampleID(obj, stem); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		if err := l.addSample(obj, id, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	return fmt.Errorf("%s: not a JSON object or list", name)
}

// sampleID is a release sample's sample_id ("conv-26" -> "26"), or def.
func sampleID(s map[string]json.RawMessage, def string) (string, error) {
	raw, ok := s["sample_id"]
	if !ok || string(raw) == "null" {
		return def, nil
	}
	id, err := scalarText(raw)
	if err != nil {
		return "", fmt.Errorf("sample_id: %w", err)
	}
	id = strings.TrimPrefix(id, "conv-")
	if id == "" {
		return def, nil
	}
	return id, nil
}

// addSample flattens a release sample (conversation, observation and
// session_summary objects) into the per-conversation layout's key set and
// adds the conversation. A per-conversation object passes through as is.
func (l *loader) addSample(s map[string]json.RawMessage, id, name string) error {
	if id == "" || strings.ContainsFunc(id, unicode.IsSpace) || strings.Contains(id, "/") {
		return fmt.Errorf("bad conversation id %q", id)
	}
	if prev, dup := l.from[id]; dup {
		return fmt.Errorf("conversation %s already loaded from %s", id, prev)
	}
	keys := s
	if _, nested := s["conversation"]; nested {
		keys = make(map[string]json.RawMessage, 2*len(s))
		for _, sub := range []string{"conversation", "observation", "session_summary"} {
			raw, ok := s[sub]
			if !ok || string(raw) == "null" {
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("%s: %w", sub, err)
			}
			for k, v := range m {
				keys[k] = v
			}
		}
		if qa, ok := s["qa"]; ok {
			keys["qa"] = qa
		}
	}
	var st Stats
	c, err := buildConversation(id, keys, &st)
	if err != nil {
		return err
	}
	if l.from == nil {
		l.from = make(map[string]string)
	}
	l.from[id] = name
	l.convs = append(l.convs, c)
	l.st.add(st)
	return nil
}

func scalarText(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return strconv.FormatBool(b), nil
	}
	return "", errors.New("not a string or number")
}
