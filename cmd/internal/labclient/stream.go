package labclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"syscall"
	"time"

	"servelab/sim/lab"
)

// frameSink receives one stream's token frames as they are read; serverT is
// the send time a self-testing lab server stamped on the frame (0: none).
type frameSink func(now time.Time, gap time.Duration, tokens int, first bool, serverT float64)

// reply is one streamed request's outcome.
type reply struct {
	ok        bool
	ttft      time.Duration
	latency   time.Duration
	chunks    int  // frames that carried output
	tokens    int  // output tokens: the server's usage when sent, else one per frame
	usage     bool // the server reported usage
	bundled   bool // some frame carried more than one token
	malformed int  // data lines that were not JSON
	err       string
	connErr   bool  // the connection failed (refused, reset, cut mid-stream), not an HTTP error
	redirect  error // the server answered with a redirect (never followed): ErrRedirect, saying where to
	cancelled bool  // stopped by the caller
	gaps      int   // gaps between content frames
	sameRead  int   // of them, 0 exactly: the frames came out of one read, with one time
	badUsage  bool  // usage counted more tokens than max_tokens allows: ignored, one per frame
}

// stampedReader remembers the arrival time of the bytes its last Read
// returned, taken before any parsing: the kernel's receive time when the
// connection has it, else the moment the read returned.
type stampedReader struct {
	r      io.Reader
	conn   *kernelConn // nil: no kernel timestamps
	last   time.Time
	kernel bool   // last came from the kernel
	onData func() // called whenever bytes arrive (resets the idle timer)
}

func (s *stampedReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 && s.onData != nil {
		s.onData()
	}
	s.last = time.Now()
	if s.conn != nil {
		s.last, s.kernel = s.conn.arrival(s.last)
	}
	return n, err
}

// connOf is the connection a request went out on, below any TLS.
func connOf(c net.Conn) *kernelConn {
	if t, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = t.NetConn()
	}
	kc, _ := c.(*kernelConn)
	return kc
}

// streamOne sends one streaming request and times every frame that carries
// output. Each line is timestamped when the read that completed it returned.
func (m *measurement) streamOne(ctx context.Context, prompt string, maxTokens int, sink frameSink) reply {
	o := &m.opts
	body := map[string]any{"model": o.Model, "max_tokens": maxTokens, "temperature": 0.0, "stream": true, "ignore_eos": o.IgnoreEOS}
	url := o.BaseURL + "/v1/completions"
	if o.API == "chat" {
		url = o.BaseURL + "/v1/chat/completions"
		body["messages"] = []map[string]string{{"role": "user", "content": prompt}}
	} else {
		body["prompt"] = prompt
	}
	if o.StreamUsage {
		// vLLM and SGLang then put the cumulative completion_tokens on every chunk.
		body["stream_options"] = map[string]bool{"include_usage": true, "continuous_usage_stats": true}
	}
	data, _ := json.Marshal(body)

	// --timeout bounds inactivity, as the script's socket timeout does.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errIdle := fmt.Errorf("no data for %gs (--timeout)", o.Timeout)
	idle := time.AfterFunc(seconds(o.Timeout), func() { cancel(errIdle) })
	defer idle.Stop()

	var conn *kernelConn
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { conn = connOf(info.Conn) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return reply{err: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	var out reply
	start := time.Now()
	fail := func(err error) reply {
		out.latency = time.Since(start)
		out.ok = false
		switch {
		case context.Cause(ctx) == errIdle:
			out.err = "timeout: " + errIdle.Error()
		case ctx.Err() != nil && m.stopping():
			out.err, out.cancelled = "interrupted", true
		default:
			out.err = errorText(err)
			out.connErr = isConnError(err)
		}
		return out
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	if isRedirect(resp.StatusCode) {
		out.latency = time.Since(start)
		out.redirect = redirectError(resp)
		out.err = out.redirect.Error()
		return out
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		out.latency = time.Since(start)
		out.err = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.ToValidUTF8(string(b), "\uFFFD"))
		return out
	}
	// Any bytes arriving count as activity, also while one long line grows.
	sr := &stampedReader{r: resp.Body, conn: conn, onData: func() { idle.Reset(seconds(o.Timeout)) }}
	br := bufio.NewReaderSize(sr, 64<<10)
	var (
		last  time.Time
		count lab.TokenCount
		event string
		long  []byte
	)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A frame longer than the buffer: keep reading, up to maxLine.
			if len(long)+len(line) > maxLine {
				out.latency = time.Since(start)
				out.err = fmt.Sprintf("a line of over %d MiB without a newline: not an SSE stream of tokens", maxLine>>20)
				return out
			}
			long = append(long, line...)
			continue
		}
		if len(long) > 0 {
			line = append(long, line...)
			long = long[:0]
		}
		if err != nil && len(line) == 0 {
			if errors.Is(err, io.EOF) {
				break // the server closed the stream; as the script, that ends it
			}
			return fail(err)
		}
		now := sr.last
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			event = "" // end of an SSE event
			continue
		case line[0] == ':':
			continue // comment / keep-alive
		case bytes.HasPrefix(line, []byte("event:")):
			event = string(bytes.TrimSpace(line[len("event:"):]))
			continue
		case !bytes.HasPrefix(line, []byte("data:")):
			continue // id:, retry:
		}
		payload := bytes.TrimSpace(line[len("data:"):])
		if string(payload) == "[DONE]" {
			break
		}
		f := count.Read(event, payload)
		switch {
		case f.Malformed:
			out.malformed++
			continue
		case f.Error != "":
			// A mid-stream error frame fails the request, whatever came before.
			out.latency = time.Since(start)
			out.ok = false
			out.err = "error frame: " + f.Error
			return out
		case f.Tokens == 0:
			continue // role-only, usage-only or empty: not a token, and must not move the last-token time
		}
		if f.Tokens > 1 && f.Tokens > maxTokens-out.tokens {
			// More than max_tokens in all (completion_tokens of 2^63-1, say):
			// a server's count that cannot be true is not believed.
			out.badUsage = true
		}
		if out.badUsage {
			f.Tokens = 1
		}
		if out.chunks == 0 {
			out.ttft = now.Sub(start)
			sink(now, 0, f.Tokens, true, f.ServelabT)
		} else {
			gap := now.Sub(last)
			out.gaps++
			if gap == 0 {
				out.sameRead++
			}
			sink(now, gap, f.Tokens, false, f.ServelabT)
		}
		out.chunks++
		out.tokens += f.Tokens
		last = now
		if err != nil {
			break
		}
	}
	out.latency = time.Since(start)
	if !out.badUsage {
		out.tokens = count.Total(out.tokens)
	}
	out.usage, out.bundled = count.Usage && !out.badUsage, count.Bundled && !out.badUsage
	out.ok = out.chunks > 0
	if !out.ok {
		out.err = "no content chunks — check --api and that streaming is on"
	}
	return out
}

// maxLine bounds one SSE line: a token frame is well under a KiB, one with
// a long text still far below this, and a server that never sends a newline
// must not make the client hold the stream in memory (on every stream).
const maxLine = 1 << 20

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// errorText names an error the way the script does: its kind, then the message.
func errorText(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "ConnectionRefusedError: " + err.Error()
	case errors.Is(err, syscall.ECONNRESET):
		return "ConnectionResetError: " + err.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "IncompleteRead: the server closed the connection mid-stream"
	case errors.As(err, &ne) && ne.Timeout():
		return "TimeoutError: " + err.Error()
	}
	return err.Error()
}

// isConnError reports whether err is the connection failing rather than the
// server answering.
func isConnError(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) || errors.As(err, &op)
}
