package lab

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
)

// This file is what one data payload of an OpenAI-compatible token stream
// means; StreamReader (sse.go) applies it to a whole stream for both
// `servelab measure` and the page's edge mode (see
// ../shared/notes/measuring-streams.md).

// StreamFrame is what one SSE data payload means to a timing client.
type StreamFrame struct {
	Tokens    int     // output tokens it carried; 0 for role-only, usage-only or empty chunks
	Error     string  // an error frame: the request has failed, whatever came before
	Malformed bool    // not JSON: skipped, as the lab script skips it
	ServelabT float64 // a self-testing servelab lab server's send time (0 from other servers)
}

// TokenCount reads one stream's frames, following the server's cumulative
// usage.completion_tokens when it sends one (vLLM and SGLang do with
// continuous_usage_stats), so a frame bundling several tokens counts them all.
type TokenCount struct {
	Usage      bool // the server reported usage
	Bundled    bool // some frame carried more than one token
	completion int  // the server's cumulative count so far
}

// streamChunk is the part of a completion or chat chunk the timing reads.
type streamChunk struct {
	Object  string          `json:"object"`
	Message string          `json:"message"` // old vLLM error object
	Error   json.RawMessage `json:"error"`
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content          string          `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"`
			ToolCalls        json.RawMessage `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	ServelabT float64 `json:"servelab_t"`
}

// Read interprets the payload of one "data:" line (not "[DONE]"); event is
// the SSE event name that came with it, if any. A role-only chat chunk is not
// the first token and a usage-only chunk (no choices) is not a token at all.
func (tc *TokenCount) Read(event string, payload []byte) StreamFrame {
	var c streamChunk
	if json.Unmarshal(payload, &c) != nil {
		return StreamFrame{Malformed: true}
	}
	if event == "error" || c.Object == "error" || (len(c.Error) > 0 && string(c.Error) != "null") {
		return StreamFrame{Error: c.errorMessage(payload)}
	}
	f := StreamFrame{ServelabT: c.ServelabT}
	if c.Usage != nil {
		tc.Usage = true
		if d := c.Usage.CompletionTokens - tc.completion; d > 0 {
			f.Tokens = d
		}
		tc.completion = max(tc.completion, c.Usage.CompletionTokens)
	}
	if len(c.Choices) == 0 || (!c.carriesOutput() && f.Tokens == 0) {
		return StreamFrame{ServelabT: c.ServelabT}
	}
	f.Tokens = max(f.Tokens, 1)
	tc.Bundled = tc.Bundled || f.Tokens > 1
	return f
}

// Total is the stream's output tokens: the server's count when it sent one,
// else frameTokens, the sum over the frames.
func (tc *TokenCount) Total(frameTokens int) int {
	if tc.completion > 0 {
		return tc.completion
	}
	return frameTokens
}

// carriesOutput reports whether a chunk holds generated output: text,
// reasoning or tool calls. A role-only chat chunk does not.
func (c *streamChunk) carriesOutput() bool {
	for _, ch := range c.Choices {
		d := &ch.Delta
		if ch.Text != "" || d.Content != "" || d.ReasoningContent != "" || d.Reasoning != "" {
			return true
		}
		if t := bytes.TrimSpace(d.ToolCalls); len(t) > 0 && string(t) != "null" && string(t) != "[]" {
			return true
		}
	}
	return false
}

// errorMessage digs the message out of an error frame.
func (c *streamChunk) errorMessage(payload []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(c.Error, &e) == nil && e.Message != "" {
		return e.Message
	}
	var s string
	if json.Unmarshal(c.Error, &s) == nil && s != "" {
		return s
	}
	if c.Message != "" {
		return c.Message
	}
	if len(payload) > 200 {
		payload = payload[:200]
	}
	return string(payload)
}

// LabPrompts makes the lab script's prompts: 32 short ones and one long one,
// each distinct pseudo-random integers so no prefix cache can serve any of them.
func LabPrompts(seed, shortLen, longLen int) (short []string, long string) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x1ab05))
	filler := func(n int) string {
		var b strings.Builder
		b.Grow(6 * n)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(10_000 + rng.IntN(89_999)))
		}
		return b.String()
	}
	short = make([]string, 32)
	for i := range short {
		short[i] = filler(shortLen)
	}
	return short, filler(longLen)
}
