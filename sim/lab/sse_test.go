package lab

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestSSEParserSplitsAndStamps(t *testing.T) {
	// One stream cut at awkward places: inside "data:", inside a CRLF,
	// inside the JSON; a comment, an id line, no space after "data:".
	chunks := []string{
		": keep-alive\r\n\r\nda",
		"ta: {\"a\":1}\r",
		"\n\r\nid: 7\ndata:{\"b\":2}\n\nevent: error\ndata: {\"c\"",
		":3}\n\ndata: [DONE]\n\n",
	}
	var p SSEParser
	var got []SSELine
	for i, c := range chunks {
		got = append(got, p.Feed([]byte(c), float64(i))...)
	}
	want := []SSELine{{T: 1, Data: []byte(`{"a":1}`)}, {T: 2, Data: []byte(`{"b":2}`)}, {T: 3, Event: "error", Data: []byte(`{"c":3}`)}, {T: 3, Data: []byte("[DONE]")}}
	if len(got) != len(want) {
		t.Fatalf("got %d lines %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].T != want[i].T || got[i].Event != want[i].Event || string(got[i].Data) != string(want[i].Data) {
			t.Errorf("line %d = {%g %q %s}, want {%g %q %s}", i, got[i].T, got[i].Event, got[i].Data, want[i].T, want[i].Event, want[i].Data)
		}
	}
	// A last line without its newline comes out at Flush.
	p.Feed([]byte("data: tail"), 4)
	if f := p.Flush(5); len(f) != 1 || string(f[0].Data) != "tail" || f[0].T != 5 {
		t.Errorf("Flush = %v", f)
	}
}

func TestSSEParserByteByByte(t *testing.T) {
	stream := "data: {\"choices\":[{\"text\":\"x\"}]}\r\n\r\ndata: {\"choices\":[{\"text\":\"y\"}]}\n\n"
	var p SSEParser
	var n int
	for i := 0; i < len(stream); i++ {
		for _, l := range p.Feed([]byte{stream[i]}, float64(i)) {
			n++
			if !json.Valid(l.Data) {
				t.Errorf("line %q is not the whole frame", l.Data)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d lines, want 2", n)
	}
}

func TestStreamReaderFrames(t *testing.T) {
	s := StreamReader{Start: 10}
	feed := func(t0 float64, lines ...string) []TokenFrame {
		return s.Feed([]byte("data: "+strings.Join(lines, "\n\ndata: ")+"\n\n"), t0)
	}
	// Role-only chat chunk, then content; usage cumulative; a usage-only chunk.
	var fs []TokenFrame
	fs = append(fs, feed(10.5, `{"choices":[{"delta":{"role":"assistant"}}]}`)...)
	fs = append(fs, feed(11, `{"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}`)...)
	fs = append(fs, feed(11.25, `{"choices":[{"text":"bc"}],"usage":{"completion_tokens":3}}`, `not json`)...)
	fs = append(fs, feed(12, `{"choices":[],"usage":{"completion_tokens":3}}`)...)
	fs = append(fs, feed(12.5, `[DONE]`, `{"choices":[{"text":"after done"}]}`)...)
	if len(fs) != 2 {
		t.Fatalf("frames %+v, want 2 (role-only, usage-only and after-[DONE] are no tokens)", fs)
	}
	if !fs[0].First || fs[0].T != 11 || fs[0].Tokens != 1 || fs[1].First || fs[1].Gap != 0.25 || fs[1].Tokens != 2 {
		t.Errorf("frames %+v", fs)
	}
	if !s.Done || s.Chunks != 2 || s.OutputTokens() != 3 || !s.Bundled || s.Malformed != 1 || !s.Usage {
		t.Errorf("timing %+v", s)
	}
	// A mid-stream error frame fails the request; nothing after it counts.
	e := StreamReader{}
	e.Feed([]byte("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"error\":{\"message\":\"boom\"}}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\n"), 1)
	if e.Err != "error frame: boom" || e.Chunks != 1 {
		t.Errorf("error frame: %+v", e)
	}
}

// write is what a server sent at once, and when it arrived: however the
// reads cut it, its bytes arrive with its time.
type write struct {
	t float64
	b string
}

// read is one read's bytes and the time they arrived.
type read struct {
	t float64
	b []byte
}

// cutWrites returns the reads that cut each write i at the offsets cut(i)
// returns (ascending; out-of-range and repeated offsets are ignored).
func cutWrites(ws []write, cut func(i int, w write) []int) []read {
	var rs []read
	for i, w := range ws {
		at := 0
		for _, c := range append(cut(i, w), len(w.b)) {
			if c > at && c <= len(w.b) {
				rs = append(rs, read{w.t, []byte(w.b[at:c])})
				at = c
			}
		}
	}
	return rs
}

// readerOutcome is everything a StreamReader came to.
type readerOutcome struct {
	Frames                                          []TokenFrame
	TTFT                                            float64
	Chunks, Tokens, Output, Gaps, SameRead, Malform int
	Usage, Bundled, BadUsage, Done                  bool
	Err                                             string
}

// readAll returns what a StreamReader comes to from reads rs and an end.
func readAll(rs []read, start float64, maxTokens int, end float64) readerOutcome {
	s := StreamReader{Start: start, MaxTokens: maxTokens}
	var fs []TokenFrame
	for _, r := range rs {
		fs = append(fs, s.Feed(r.b, r.t)...)
	}
	fs = append(fs, s.End(end)...)
	return readerOutcome{fs, s.TTFT, s.Chunks, s.Tokens, s.OutputTokens(), s.Gaps, s.SameRead, s.Malformed,
		s.Usage, s.Bundled, s.BadUsage, s.Done, s.Err}
}

func TestStreamReaderFramesDoNotDependOnTheCuts(t *testing.T) {
	tok := func(text string, usage int) string {
		if usage < 0 {
			return fmt.Sprintf(`{"choices":[{"text":%q}]}`, text)
		}
		return fmt.Sprintf(`{"choices":[{"text":%q}],"usage":{"completion_tokens":%d}}`, text, usage)
	}
	const huge = 9223372036854775807
	cases := []struct {
		name   string
		writes []write
		end    float64
		want   readerOutcome
	}{{
		name: "CR, CRLF across writes, bundled, usage beyond max_tokens, error frame mid-stream",
		writes: []write{
			{1, ": ping\r\n\r\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\r\n\r\n"},
			{2, "data:" + tok("a", 1) + "\r"}, // its LF comes with the next write
			{3, "\n\r\nevent: message\rdata: " + tok("bc", 3) + "\r\r"},
			{4, "data: not json\n\ndata: {\"choices\":[],\"usage\":{\"completion_tokens\":3}}\n\n"},
			{5, "data: " + tok("d", huge) + "\n\n"},
			{6, "data: " + tok("e", huge) + "\n\ndata: " + tok("f", -1) + "\n\n"},
			{7, "event: error\r\ndata: {\"message\":\"engine died\"}\r\n\r\n"},
			{8, "data: " + tok("g", -1) + "\n\ndata: [DONE]\n\n"},
		},
		end: 9,
		want: readerOutcome{
			Frames: []TokenFrame{{T: 2, Tokens: 1, First: true}, {T: 3, Gap: 1, Tokens: 2}, {T: 5, Gap: 2, Tokens: 1},
				{T: 6, Gap: 1, Tokens: 1}, {T: 6, Gap: 0, Tokens: 1}},
			TTFT: 1.5, Chunks: 5, Tokens: 6, Output: 6, Gaps: 4, SameRead: 1, Malform: 1,
			BadUsage: true, Err: "error frame: engine died",
		},
	}, {
		name: "a frame across writes, servelab_t, an unterminated last line",
		writes: []write{
			{1, "data: {\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":2}"},
			{2, ",\"servelab_t\":1.5}\r\n\r\n"},
			{3, "data: " + tok("b", 3)},
		},
		end: 4,
		want: readerOutcome{
			Frames: []TokenFrame{{T: 2, Tokens: 2, First: true, ServelabT: 1.5}, {T: 4, Gap: 2, Tokens: 1}},
			TTFT:   1.5, Chunks: 2, Tokens: 3, Output: 3, Gaps: 1, Usage: true, Bundled: true,
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			cuts := map[string]func(int, write) []int{
				"one read a write": func(int, write) []int { return nil },
				"byte by byte": func(_ int, w write) []int {
					var cs []int
					for i := 1; i < len(w.b); i++ {
						cs = append(cs, i)
					}
					return cs
				},
				"CR and LF apart": func(_ int, w write) []int {
					var cs []int
					for i := 1; i < len(w.b); i++ {
						if w.b[i-1] == '\r' {
							cs = append(cs, i)
						}
					}
					return cs
				},
			}
			for k := 1; k < 200; k++ {
				cuts[fmt.Sprintf("every write cut at %d", k)] = func(int, write) []int { return []int{k} }
			}
			for k := 0; k < 50; k++ {
				cs := map[int][]int{}
				for i, w := range c.writes {
					for j := rng.IntN(6); j > 0; j-- {
						cs[i] = append(cs[i], rng.IntN(len(w.b)+1))
					}
					slices.Sort(cs[i])
				}
				cuts[fmt.Sprintf("random %d %v", k, cs)] = func(i int, _ write) []int { return cs[i] }
			}
			for name, cut := range cuts {
				if got := readAll(cutWrites(c.writes, cut), 0.5, 8, c.end); !reflect.DeepEqual(got, c.want) {
					t.Errorf("%s:\n got %+v\nwant %+v", name, got, c.want)
				}
			}
			// Reads that span writes stamp what they complete with their own
			// (later) time; only the times differ.
			var all []byte
			for _, w := range c.writes {
				all = append(all, w.b...)
			}
			last := c.writes[len(c.writes)-1].t
			got := readAll([]read{{last, all}}, 0.5, 8, c.end)
			want := c.want
			want.Frames = append([]TokenFrame(nil), want.Frames...)
			if want.Err == "" { // the unterminated line still comes at the end
				want.Frames[len(want.Frames)-1].T = c.end
			}
			prev := 0.0
			want.SameRead = 0
			for i := range want.Frames {
				f := &want.Frames[i]
				if f.T != c.end {
					f.T = last
				}
				if !f.First {
					f.Gap = f.T - prev
					if f.Gap == 0 {
						want.SameRead++
					}
				}
				prev = f.T
			}
			want.TTFT = want.Frames[0].T - 0.5
			if !reflect.DeepEqual(got, want) {
				t.Errorf("one read of everything:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestStreamReaderCutsAnEndlessLine: a line growing past MaxLine fails the
// request and the reader stops taking bytes.
func TestStreamReaderCutsAnEndlessLine(t *testing.T) {
	s := StreamReader{}
	s.Feed([]byte("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: "), 1)
	chunk := []byte(strings.Repeat("x", 64<<10))
	for i := 0; i < 2*MaxLine/len(chunk) && !s.Over(); i++ {
		s.Feed(chunk, 2)
	}
	if !strings.Contains(s.Err, "without a newline") || s.Chunks != 1 || s.parser.Pending() > MaxLine+len(chunk) {
		t.Errorf("err %q, chunks %d, holding %d bytes", s.Err, s.Chunks, s.parser.Pending())
	}
	if fs := s.Feed([]byte("\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\n"), 3); len(fs) != 0 {
		t.Errorf("frames after the failure: %+v", fs)
	}
}
