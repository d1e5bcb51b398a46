package lab

import (
	"strings"
	"testing"
)

func TestTokenCountReadsFramesAsAClientMust(t *testing.T) {
	var tc TokenCount
	frames := []struct {
		event, data string
		want        StreamFrame
	}{
		{"", `{"choices":[{"delta":{"role":"assistant"}}]}`, StreamFrame{}},                                       // role-only: not the first token
		{"", `{"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":1}}`, StreamFrame{Tokens: 1}},   // one token
		{"", `{"choices":[{"delta":{"content":"bcd"}}],"usage":{"completion_tokens":4}}`, StreamFrame{Tokens: 3}}, // bundled
		{"", `{"choices":[],"usage":{"completion_tokens":4}}`, StreamFrame{}},                                     // usage-only
		{"", `{"choices":[{"text":"x"}],"servelab_t":12.5}`, StreamFrame{Tokens: 1, ServelabT: 12.5}},             // no usage: one per frame
		{"", `not json`, StreamFrame{Malformed: true}},                                                            // skipped
		{"", `{"error":{"message":"CUDA out of memory"}}`, StreamFrame{Error: "CUDA out of memory"}},              // fails the request
		{"error", `{"detail":"boom"}`, StreamFrame{Error: `{"detail":"boom"}`}},                                   // event: error
		{"", `{"choices":[{"delta":{"tool_calls":[{"id":"t"}]}}]}`, StreamFrame{Tokens: 1}},                       // tool calls are output
	}
	for i, f := range frames {
		if got := tc.Read(f.event, []byte(f.data)); got != f.want {
			t.Errorf("frame %d %s: got %+v, want %+v", i, f.data, got, f.want)
		}
	}
	if !tc.Usage || !tc.Bundled || tc.Total(99) != 4 {
		t.Errorf("count %+v total %d", tc, tc.Total(99))
	}
	var none TokenCount
	if none.Total(7) != 7 {
		t.Error("without usage the total is the frames' sum")
	}
}

func TestLabPromptsAreDistinctIntegers(t *testing.T) {
	short, long := LabPrompts(0, 128, 2000)
	seen := map[string]bool{}
	for _, p := range append(short, long) {
		if seen[p] {
			t.Fatal("a prompt repeats")
		}
		seen[p] = true
	}
	if n := len(strings.Fields(short[0])); n != 128 || len(strings.Fields(long)) != 2000 {
		t.Fatalf("lengths %d, %d", n, len(strings.Fields(long)))
	}
	again, _ := LabPrompts(0, 128, 2000)
	other, _ := LabPrompts(1, 128, 2000)
	if again[5] != short[5] || other[5] == short[5] {
		t.Fatal("prompts must depend on the seed and only on it")
	}
}
