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
	connErr   bool // the connection failed (refused, reset, cut mid-stream), not an HTTP error
	cancelled bool // stopped by the caller
}

// stampedReader remembers the arrival time of the bytes its last Read
// returned, taken before any parsing: the kernel's receive time when the
// connection has it, else the moment the read returned.
type stampedReader struct {
	r      io.Reader
	conn   *kernelConn // nil: no kernel timestamps
	last   time.Time
	kernel bool // last came from the kernel
}

func (s *stampedReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
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

// chunk is the part of a streamed completion or chat chunk the client reads.
type chunk struct {
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
	ServelabT float64 `json:"servelab_t"` // a self-testing servelab lab server's send time
}

// carriesOutput reports whether a chunk holds generated output: text,
// reasoning or tool calls. A role-only chat chunk does not.
func (c *chunk) carriesOutput() bool {
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
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		out.latency = time.Since(start)
		out.err = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.ToValidUTF8(string(b), "\uFFFD"))
		return out
	}
	sr := &stampedReader{r: resp.Body, conn: conn}
	br := bufio.NewReaderSize(sr, 64<<10)
	var (
		last     time.Time
		usageCT  int // cumulative completion_tokens last reported
		frameTok int
		event    string
		long     []byte
	)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A frame longer than the buffer: keep reading, no line-length limit.
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
		idle.Reset(seconds(o.Timeout))
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
		var c chunk
		if json.Unmarshal(payload, &c) != nil {
			out.malformed++
			continue
		}
		if event == "error" || c.Object == "error" || (len(c.Error) > 0 && string(c.Error) != "null") {
			// A mid-stream error frame fails the request, whatever came before.
			out.latency = time.Since(start)
			out.ok = false
			out.err = "error frame: " + errorMessage(&c, payload)
			return out
		}
		frameTok = 0
		if c.Usage != nil {
			out.usage = true
			if d := c.Usage.CompletionTokens - usageCT; d > 0 {
				frameTok = d
			}
			usageCT = max(usageCT, c.Usage.CompletionTokens)
		}
		if len(c.Choices) == 0 {
			continue // usage-only chunk: not a token, and must not move the last-token time
		}
		if !c.carriesOutput() && frameTok == 0 {
			continue // role-only or empty chunk
		}
		if frameTok == 0 {
			frameTok = 1
		}
		if frameTok > 1 {
			out.bundled = true
		}
		if out.chunks == 0 {
			out.ttft = now.Sub(start)
			sink(now, 0, frameTok, true, c.ServelabT)
		} else {
			sink(now, now.Sub(last), frameTok, false, c.ServelabT)
		}
		out.chunks++
		out.tokens += frameTok
		last = now
		if err != nil {
			break
		}
	}
	out.latency = time.Since(start)
	if usageCT > 0 {
		out.tokens = usageCT
	}
	out.ok = out.chunks > 0
	if !out.ok {
		out.err = "no content chunks — check --api and that streaming is on"
	}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// errorMessage digs the message out of an error frame.
func errorMessage(c *chunk, payload []byte) string {
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
