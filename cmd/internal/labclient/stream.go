package labclient

import (
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

// streamOne sends one streaming request and returns its outcome, handing
// every frame that carries output to sink as it is read. lab.StreamReader
// reads the stream: each read's bytes are fed with that read's arrival time
// (the kernel's when the connection has it), so each line is stamped with
// the read that completed it.
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
	// The reader's clock: nanoseconds since start, exact in a float64, so
	// every time and gap converts back to the nanosecond.
	rd := lab.StreamReader{MaxTokens: maxTokens}
	var out reply
	start := time.Now()
	fail := func(err error) reply {
		out := replyOf(&rd) // what was read before the failure
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
	emit := func(fs []lab.TokenFrame) {
		for _, f := range fs {
			sink(start.Add(time.Duration(f.T)), time.Duration(f.Gap), f.Tokens, f.First, f.ServelabT)
		}
	}
	buf := make([]byte, 64<<10)
	for !rd.Over() {
		n, err := sr.Read(buf)
		t := float64(sr.last.Sub(start))
		if m.tap != nil {
			m.tap(buf[:n], t, err)
		}
		if n > 0 {
			emit(rd.Feed(buf[:n], t))
		}
		if err == nil || rd.Over() {
			continue
		}
		if !errors.Is(err, io.EOF) {
			return fail(err)
		}
		emit(rd.End(t)) // the server closed the stream; as the script, that ends it
		break
	}
	out = replyOf(&rd)
	out.latency = time.Since(start)
	return out
}

// replyOf returns the outcome a stream reader came to, less the latency.
func replyOf(rd *lab.StreamReader) reply {
	out := reply{ttft: time.Duration(rd.TTFT), chunks: rd.Chunks, tokens: rd.OutputTokens(), usage: rd.Usage, bundled: rd.Bundled,
		malformed: rd.Malformed, gaps: rd.Gaps, sameRead: rd.SameRead, badUsage: rd.BadUsage, err: rd.Err}
	out.ok = out.err == "" && out.chunks > 0
	if out.err == "" && !out.ok {
		out.err = "no content chunks — check --api and that streaming is on"
	}
	return out
}

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
