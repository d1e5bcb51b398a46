package lab

import (
	"bytes"
	"fmt"
	"strings"
)

// This file is the one reader of an OpenAI-compatible token stream, without
// I/O: the caller reads the response body (a socket for `servelab measure`,
// the browser's fetch for the page's edge mode) and feeds each read's bytes
// with the time they arrived. Everything from there to token frames, TTFT,
// gaps and the request's verdict is decided here, once.

// MaxLine bounds one SSE line: a token frame is well under a KiB, one with a
// long text still far below this, and a server that never sends a newline
// must not make the client hold the stream in memory.
const MaxLine = 1 << 20

// SSELine is one data line of an event stream and the time of the read
// that completed it.
type SSELine struct {
	T     float64
	Event string // the event: field in force ("" for plain messages)
	Data  []byte // the value after "data:", trimmed of white space
}

// SSEParser splits an event stream read in arbitrary chunks into data
// lines. A line split across chunks is stamped with the chunk that ends it.
// Each data line is one payload: OpenAI-compatible servers send one data
// line per event, so lines are not joined into events.
type SSEParser struct {
	buf    []byte // the unfinished line
	event  string
	skipLF bool // the last chunk ended in CR: an LF opening the next one ends no line
}

// Feed consumes one chunk read at time t and returns the data lines it
// finished. Comments, id: and retry: lines are dropped; CRLF, CR and LF
// all end a line, a CRLF split across chunks included; "data:" may be
// followed by a space or not.
func (p *SSEParser) Feed(chunk []byte, t float64) []SSELine {
	if p.skipLF && len(chunk) > 0 {
		p.skipLF = false
		if chunk[0] == '\n' {
			chunk = chunk[1:]
		}
	}
	var out []SSELine
	for len(chunk) > 0 {
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			p.buf = append(p.buf, chunk...)
			break
		}
		line := chunk[:i]
		if len(p.buf) > 0 {
			p.buf = append(p.buf, line...)
			line = p.buf
		}
		next := i + 1
		if chunk[i] == '\r' {
			if i+1 == len(chunk) {
				p.skipLF = true
			} else if chunk[i+1] == '\n' {
				next++
			}
		}
		if l, ok := p.line(line, t); ok {
			out = append(out, l)
		}
		p.buf = p.buf[:0]
		chunk = chunk[next:]
	}
	return out
}

// Pending returns the length of the line the parser holds unfinished.
func (p *SSEParser) Pending() int { return len(p.buf) }

// Flush returns the data line the stream ended on without terminating it,
// stamped t (the end of the stream), if there is one.
func (p *SSEParser) Flush(t float64) []SSELine {
	line := p.buf
	p.buf, p.skipLF = nil, false
	if len(line) == 0 {
		return nil
	}
	if l, ok := p.line(line, t); ok {
		return []SSELine{l}
	}
	return nil
}

// line interprets one complete line and returns it when it is a data line.
// The returned data is a copy: line may be the caller's chunk or p.buf.
func (p *SSEParser) line(line []byte, t float64) (SSELine, bool) {
	switch {
	case len(line) == 0:
		p.event = "" // the end of an event
	case line[0] == ':':
		// a comment or keep-alive
	case bytes.HasPrefix(line, []byte("event:")):
		p.event = strings.TrimSpace(string(line[len("event:"):]))
	case bytes.HasPrefix(line, []byte("data:")):
		d := bytes.TrimSpace(line[len("data:"):])
		return SSELine{T: t, Event: p.event, Data: append([]byte(nil), d...)}, true
	}
	return SSELine{}, false
}

// TokenFrame is one frame of a stream that carried output.
type TokenFrame struct {
	T         float64 // the time of the read that completed the frame's line
	Gap       float64 // T less the stream's previous token frame's T; 0 for its first
	Tokens    int     // output tokens it carried
	First     bool    // the stream's first token frame: T less Start is the TTFT
	ServelabT float64 // a self-testing servelab lab server's send time (0 from other servers)
}

// StreamReader reads one streamed completion from the bytes of its body,
// fed as they were read, each read with the time it arrived. Times are on
// any one clock in any one unit (the page: seconds; servelab measure:
// nanoseconds since the request was sent, which a float64 holds exactly).
//
// Its rule: a frame carrying output (text, reasoning, tool calls, or a
// rise in the server's cumulative usage.completion_tokens) is a token
// frame, stamped with the read that completed its line; the first one
// gives the TTFT and every later one a gap from the one before. Role-only,
// usage-only and empty chunks are no tokens and do not move the last-token
// time. A frame's tokens are the rise in the server's cumulative count when
// it sends one, else 1; a rise beyond what MaxTokens leaves is not believed,
// and from then on every frame counts 1 and the stream's usage is ignored.
// A payload that is not JSON is counted and skipped. An error frame, or a
// line over MaxLine, fails the request; [DONE] ends it; nothing after
// either counts. A last line the stream ends without terminating counts,
// stamped with the end.
type StreamReader struct {
	Start     float64 // when the request was sent
	MaxTokens int     // the request's max_tokens; 0: no bound on the server's count

	TTFT      float64 // the first token frame's T less Start; 0 before it
	Chunks    int     // token frames
	Tokens    int     // the token frames' tokens summed
	Gaps      int     // gaps between token frames
	SameRead  int     // of them, 0 exactly: the frames came out of one read
	Malformed int     // data lines that were not JSON, skipped
	Usage     bool    // the server reported usage, and it was believed
	Bundled   bool    // some frame carried several tokens by a believed usage
	BadUsage  bool    // the usage claimed more than MaxTokens allows: ignored
	Done      bool    // [DONE] was read
	Err       string  // why the request failed: an error frame or an endless line

	parser SSEParser
	count  TokenCount
	last   float64
}

// Feed consumes one read's bytes, arrived at time t, and returns the token
// frames they completed. Once the stream is over (Over) it reads nothing.
func (s *StreamReader) Feed(b []byte, t float64) []TokenFrame {
	if s.Over() {
		return nil
	}
	out := s.lines(s.parser.Feed(b, t))
	if !s.Over() && s.parser.Pending() > MaxLine {
		s.Err = fmt.Sprintf("a line of over %d MiB without a newline: not an SSE stream of tokens", MaxLine>>20)
	}
	return out
}

// End closes the stream at time t (its body ended) and returns the token
// frame an unterminated last line held, if any.
func (s *StreamReader) End(t float64) []TokenFrame {
	if s.Over() {
		return nil
	}
	return s.lines(s.parser.Flush(t))
}

// Over reports whether the stream has ended by [DONE] or failed: a caller
// may stop reading.
func (s *StreamReader) Over() bool { return s.Done || s.Err != "" }

// OutputTokens returns the stream's output tokens: the server's cumulative
// count when it sent one that was believed, else the token frames' sum.
func (s *StreamReader) OutputTokens() int {
	if s.BadUsage {
		return s.Tokens
	}
	return s.count.Total(s.Tokens)
}

// lines applies the rule to data lines and returns the token frames.
func (s *StreamReader) lines(ls []SSELine) []TokenFrame {
	var out []TokenFrame
	for _, l := range ls {
		if s.Over() {
			break
		}
		if string(l.Data) == "[DONE]" {
			s.Done = true
			break
		}
		fr := s.count.Read(l.Event, l.Data)
		if fr.Malformed {
			s.Malformed++
			continue
		}
		if fr.Error != "" {
			s.Err = "error frame: " + fr.Error
			break
		}
		tok := fr.Tokens
		if s.MaxTokens > 0 && tok > 1 && tok > s.MaxTokens-s.Tokens {
			s.BadUsage = true // a count that cannot be true (2^63-1, say)
		}
		s.Usage = s.count.Usage && !s.BadUsage
		s.Bundled = s.count.Bundled && !s.BadUsage
		if tok == 0 {
			continue
		}
		if s.BadUsage {
			tok = 1
		}
		f := TokenFrame{T: l.T, Tokens: tok, First: s.Chunks == 0, ServelabT: fr.ServelabT}
		if f.First {
			s.TTFT = l.T - s.Start
		} else {
			f.Gap = l.T - s.last
			s.Gaps++
			if f.Gap == 0 {
				s.SameRead++
			}
		}
		s.last = l.T
		s.Chunks++
		s.Tokens += tok
		out = append(out, f)
	}
	return out
}
