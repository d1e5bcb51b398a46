package proxy

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzValidateCompletion: whatever the body, an accepted one goes upstream
// as one JSON object with only the lab's fields, one string prompt (or
// messages of string content), max_tokens within the limit and one choice.
func FuzzValidateCompletion(f *testing.F) {
	for _, c := range labBodies {
		f.Add([]byte(c.body), c.chat)
	}
	f.Add([]byte(`{"prompt":["a","b"],"max_tokens":4}`), false)
	f.Add([]byte(`{"prompt":"x","n":2,"use_beam_search":true}`), false)
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`), true)
	up, _ := NormalizeUpstream("http://lab.example/v1")
	const limit = 64
	f.Fuzz(func(t *testing.T, body []byte, chat bool) {
		out, e := ValidateCompletion(body, limit, chat, up)
		if e != nil {
			if e.Status < 400 || e.Status > 499 || e.Msg == "" {
				t.Fatalf("refusal %+v", e)
			}
			return
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(out, &fields); err != nil {
			t.Fatalf("forwarded body is not a JSON object: %v: %s", err, out)
		}
		allowed := completionFields
		if chat {
			allowed = chatFields
		}
		for k := range fields {
			if !slices.Contains(allowed, k) {
				t.Fatalf("forwarded field %q: %s", k, out)
			}
		}
		if p, ok := fields["prompt"]; ok {
			var s string
			if json.Unmarshal(p, &s) != nil {
				t.Fatalf("forwarded prompt %s is not one string", p)
			}
		}
		if m, ok := fields["messages"]; ok {
			var msgs []map[string]string
			if json.Unmarshal(m, &msgs) != nil {
				t.Fatalf("forwarded messages %s are not role/content strings", m)
			}
		}
		for _, name := range []string{"max_tokens", "max_completion_tokens"} {
			if raw, ok := fields[name]; ok {
				var n int64
				if json.Unmarshal(raw, &n) != nil || n < 1 || n > limit {
					t.Fatalf("forwarded %s %s", name, raw)
				}
			}
		}
		for _, name := range []string{"n", "best_of"} {
			if raw, ok := fields[name]; ok && string(raw) != "1" && string(raw) != "null" {
				t.Fatalf("forwarded %s %s", name, raw)
			}
		}
	})
}
