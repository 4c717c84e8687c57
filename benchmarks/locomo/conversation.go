package locomo

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

type rawTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

type rawQA struct {
	Question          string          `json:"question"`
	Answer            json.RawMessage `json:"answer"`
	AdversarialAnswer json.RawMessage `json:"adversarial_answer"`
	Evidence          []string        `json:"evidence"`
	Category          Category        `json:"category"`
}

// rawSession gathers one session's keys.
type rawSession struct {
	turns, dateTime, observation, summary json.RawMessage
}

// sessionKey splits "session_12_date_time" into 12 and "_date_time".
func sessionKey(k string) (n int, suffix string, ok bool) {
	rest, found := strings.CutPrefix(k, "session_")
	if !found {
		return 0, "", false
	}
	digits, suffix, _ := strings.Cut(rest, "_")
	n, ok = parseIndex(digits)
	if suffix != "" {
		suffix = "_" + suffix
	}
	return n, suffix, ok
}

func buildConversation(id string, keys map[string]json.RawMessage, st *Stats) (Conversation, error) {
	c := Conversation{ID: id}
	st.Conversations++
	for k, dst := range map[string]*string{"speaker_a": &c.SpeakerA, "speaker_b": &c.SpeakerB} {
		if raw, ok := keys[k]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return c, fmt.Errorf("%s: %w", k, err)
			}
		}
	}

	sessions := map[int]*rawSession{}
	for k, v := range keys {
		n, suffix, ok := sessionKey(k)
		if !ok || string(v) == "null" {
			continue
		}
		rs := sessions[n]
		if rs == nil {
			rs = &rawSession{}
			sessions[n] = rs
		}
		switch suffix {
		case "":
			rs.turns = v
		case "_date_time":
			rs.dateTime = v
		case "_observation":
			rs.observation = v
		case "_summary":
			rs.summary = v
		}
	}
	order := make([]int, 0, len(sessions))
	for n := range sessions {
		order = append(order, n)
	}
	sort.Ints(order)

	turns := map[string]bool{}
	for _, n := range order {
		s, err := buildSession(n, sessions[n], turns, st)
		if err != nil {
			return c, fmt.Errorf("session_%d: %w", n, err)
		}
		if len(s.Turns) == 0 {
			st.SessionsWithoutTurns++
			continue
		}
		c.Sessions = append(c.Sessions, s)
	}
	// Observations need every turn known: link them in a second pass.
	for i := range c.Sessions {
		s := &c.Sessions[i]
		if err := buildObservations(s, sessions[s.Index].observation, []string{c.SpeakerA, c.SpeakerB}, turns, st); err != nil {
			return c, fmt.Errorf("session_%d_observation: %w", s.Index, err)
		}
	}

	var qa []rawQA
	if raw, ok := keys["qa"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &qa); err != nil {
			return c, fmt.Errorf("qa: %w", err)
		}
	}
	for i, q := range qa {
		st.Questions++
		ev := resolveEvidence(q.Evidence, turns, st)
		if len(ev) == 0 {
			st.SkippedNoEvidence++
			st.category(q.Category, 1, 0)
			continue
		}
		st.WithEvidence++
		st.category(q.Category, 1, 1)
		answer, err := answerText(q.Answer)
		if err != nil {
			return c, fmt.Errorf("qa[%d]: answer: %w", i, err)
		}
		adv, err := answerText(q.AdversarialAnswer)
		if err != nil {
			return c, fmt.Errorf("qa[%d]: adversarial_answer: %w", i, err)
		}
		if len(q.Answer) == 0 {
			answer = adv
		}
		c.Questions = append(c.Questions, Question{
			ID:                id + "/Q" + strconv.Itoa(i),
			ConvID:            id,
			Text:              q.Question,
			Answer:            answer,
			AdversarialAnswer: adv,
			Category:          q.Category,
			Evidence:          ev,
		})
	}
	return c, nil
}

// buildSession decodes a session's turns, date and summary, and records
// its turns' dia_ids in turns.
func buildSession(n int, rs *rawSession, turns map[string]bool, st *Stats) (Session, error) {
	s := Session{Index: n}
	if rs.dateTime != nil {
		if err := json.Unmarshal(rs.dateTime, &s.RawTime); err != nil {
			return s, fmt.Errorf("date_time: %w", err)
		}
	}
	var raw []rawTurn
	if rs.turns != nil {
		if err := json.Unmarshal(rs.turns, &raw); err != nil {
			return s, err
		}
	}
	for _, t := range raw {
		canon, sess, _, ok := parseDiaID(t.DiaID)
		if !ok || sess != n || turns[canon] {
			st.TurnsDropped++
			continue
		}
		turns[canon] = true
		s.Turns = append(s.Turns, Turn{DiaID: canon, Speaker: t.Speaker, Text: t.Text, ImageCaption: t.BlipCaption})
		st.Turns++
		if t.BlipCaption != "" {
			st.ImageTurns++
		}
	}
	if len(s.Turns) == 0 {
		return s, nil
	}
	st.Sessions++
	if s.RawTime != "" {
		t, err := ParseTime(s.RawTime)
		if err != nil {
			st.UnparsedTimes++
		} else {
			s.Time = t
		}
	}
	if rs.summary != nil {
		if err := json.Unmarshal(rs.summary, &s.Summary); err != nil {
			return s, fmt.Errorf("summary: %w", err)
		}
	}
	return s, nil
}

// buildObservations decodes session_N_observation: {speaker: [[text,
// dia_id or [dia_id...]], ...]}. Speakers come in the order speaker_a,
// speaker_b, then any others by name, so observation numbers are stable
// although JSON objects are unordered. Items of another shape are errors.
func buildObservations(s *Session, raw json.RawMessage, speakers []string, turns map[string]bool, st *Stats) error {
	if raw == nil {
		return nil
	}
	var bySpeaker map[string][][]json.RawMessage
	if err := json.Unmarshal(raw, &bySpeaker); err != nil {
		return err
	}
	var names, others []string
	for _, sp := range speakers {
		if _, ok := bySpeaker[sp]; ok && !slices.Contains(names, sp) {
			names = append(names, sp)
		}
	}
	for name := range bySpeaker {
		if !slices.Contains(names, name) {
			others = append(others, name)
		}
	}
	sort.Strings(others)
	names = append(names, others...)
	for _, name := range names {
		for j, item := range bySpeaker[name] {
			if len(item) != 2 {
				return fmt.Errorf("%s[%d]: want [text, dia_id], got %d items", name, j, len(item))
			}
			var o Observation
			if err := json.Unmarshal(item[0], &o.Text); err != nil {
				return fmt.Errorf("%s[%d]: %w", name, j, err)
			}
			var links []string
			if err := json.Unmarshal(item[1], &links); err != nil {
				var one string
				if err := json.Unmarshal(item[1], &one); err != nil {
					return fmt.Errorf("%s[%d]: dia_id: %w", name, j, err)
				}
				links = []string{one}
			}
			var dropped int
			o.Speaker = name
			o.DiaIDs, dropped = resolveLinks(links, turns)
			st.ObservationLinksDropped += dropped
			s.Observations = append(s.Observations, o)
			st.Observations++
		}
	}
	return nil
}

// answerText renders an answer: a string as is, null or absent as "", any
// other scalar (the data has integer answers) as its JSON text.
func answerText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	return scalarText(raw)
}
