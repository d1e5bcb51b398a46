package labclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"servelab/sim/lab"
)

// script is a fake server's answer to one streaming request: frames written
// with a pause before each.
type script struct {
	pause  time.Duration
	frames []string
}

// fakeServer serves /v1/models and answers every generation request with
// the frames make returns for it.
func fakeServer(t *testing.T, make func(n int, body map[string]any) script) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-model"}]}`)
	})
	gen := func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, "bad body", 400)
			return
		}
		s := make(int(n.Add(1)), body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		for _, f := range s.frames {
			select {
			case <-time.After(s.pause):
			case <-r.Context().Done():
				return
			}
			if _, err := io.WriteString(w, f); err != nil {
				return
			}
			_ = rc.Flush()
		}
	}
	mux.HandleFunc("/v1/completions", gen)
	mux.HandleFunc("/v1/chat/completions", gen)
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func opts(url string) Options {
	c := lab.DefaultConfig()
	c.BaseURL, c.Label = url, "t"
	c.ShortConcurrency, c.ShortInputLen, c.ShortOutputLen = 2, 4, 3
	c.LongInputLen, c.LongOutputLen = 10, 2
	c.Duration, c.InjectAfter, c.Warmup, c.Timeout = 0.3, 0.1, 0, 5
	return Options{Config: c, StreamUsage: true, RawFrames: true}
}

// oneStream runs a single request through the client against a script.
func oneStream(t *testing.T, o Options, frames ...string) (reply, []int) {
	t.Helper()
	srv := fakeServer(t, func(int, map[string]any) script { return script{pause: 2 * time.Millisecond, frames: frames} })
	o.BaseURL = srv.URL
	o.Model = "fake-model"
	m := &measurement{opts: o, client: NewClient(2, true), t0: time.Now()}
	var toks []int
	r := m.streamOne(context.Background(), "1 2 3", 16, func(_ time.Time, _ time.Duration, n int, _ bool, _ float64) { toks = append(toks, n) })
	return r, toks
}

func TestChunkHandling(t *testing.T) {
	text := func(s string) string { return `data: {"choices":[{"index":0,"text":"` + s + `"}]}` + "\n\n" }
	for _, c := range []struct {
		name   string
		api    string
		frames []string
		ok     bool
		chunks int
		tokens int
		toks   []int
		err    string
	}{
		{"plain", "completions", []string{text("a"), text("b"), text("c"), "data: [DONE]\n\n"}, true, 3, 3, []int{1, 1, 1}, ""},
		{"no space, CRLF, comments, other fields", "completions", []string{": ping\r\n\r\n", "event: message\r\nid: 1\r\ndata:" + `{"choices":[{"text":"a"}]}` + "\r\n\r\n", "retry: 10\n" + text("b"), "data:[DONE]\n\n"}, true, 2, 2, []int{1, 1}, ""},
		{"chat role-only first chunk is not a token", "chat", []string{
			`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{"content":"x"}}]}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"1"}]}}]}` + "\n\n",
			"data: [DONE]\n\n"}, true, 3, 3, []int{1, 1, 1}, ""},
		{"usage: tokens per frame, usage-only chunk not a token", "completions", []string{
			`data: {"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}` + "\n\n",
			`data: {"choices":[{"text":"bcd"}],"usage":{"completion_tokens":4}}` + "\n\n",
			`data: {"choices":[],"usage":{"completion_tokens":4}}` + "\n\n",
			"data: [DONE]\n\n"}, true, 2, 4, []int{1, 3}, ""},
		{"mid-stream error frame fails the request", "completions", []string{text("a"), `data: {"error":{"message":"engine died","code":500}}` + "\n\n", text("b")}, false, 1, 1, []int{1}, "engine died"},
		{"old-style error object", "completions", []string{text("a"), `data: {"object":"error","message":"boom"}` + "\n\n"}, false, 1, 1, []int{1}, "boom"},
		{"malformed lines are skipped", "completions", []string{"data: {nope\n\n", text("a"), "data: [DONE]\n\n"}, true, 1, 1, []int{1}, ""},
		{"nothing but a role chunk", "chat", []string{`data: {"choices":[{"delta":{"role":"assistant"}}]}` + "\n\n", "data: [DONE]\n\n"}, false, 0, 0, nil, "no content chunks"},
		{"completion_tokens of 2^63-1 is not a count", "completions", []string{
			`data: {"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}` + "\n\n",
			`data: {"choices":[{"text":"b"}],"usage":{"completion_tokens":9223372036854775807}}` + "\n\n",
			`data: {"choices":[{"text":"c"}],"usage":{"completion_tokens":9223372036854775807}}` + "\n\n",
			"data: [DONE]\n\n"}, true, 3, 3, []int{1, 1, 1}, ""},
		{"a frame far beyond 64 KiB", "completions", []string{text(strings.Repeat("x", 200_000)), "data: [DONE]\n\n"}, true, 1, 1, []int{1}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := opts("")
			o.API = c.api
			r, toks := oneStream(t, o, c.frames...)
			if r.ok != c.ok || r.chunks != c.chunks || r.tokens != c.tokens || !strings.Contains(r.err, c.err) || fmt.Sprint(toks) != fmt.Sprint(c.toks) {
				t.Errorf("got ok=%v chunks=%d tokens=%d toks=%v err=%q; want ok=%v chunks=%d tokens=%d toks=%v err~%q",
					r.ok, r.chunks, r.tokens, toks, r.err, c.ok, c.chunks, c.tokens, c.toks, c.err)
			}
		})
	}
}

func TestRequestBodyMatchesScript(t *testing.T) {
	got := make(chan map[string]any, 1)
	srv := fakeServer(t, func(_ int, body map[string]any) script {
		select {
		case got <- body:
		default:
		}
		return script{frames: []string{`data: {"choices":[{"text":"a"}]}` + "\n\n"}}
	})
	o := opts(srv.URL)
	o.API, o.Model = "chat", "m"
	m := &measurement{opts: o, client: NewClient(1, true), t0: time.Now()}
	m.streamOne(context.Background(), "11 22", 7, func(time.Time, time.Duration, int, bool, float64) {})
	b := <-got
	msgs, _ := json.Marshal(b["messages"])
	if b["model"] != "m" || b["max_tokens"] != float64(7) || b["temperature"] != 0.0 || b["stream"] != true || b["ignore_eos"] != true ||
		string(msgs) != `[{"content":"11 22","role":"user"}]` || b["stream_options"] == nil {
		t.Errorf("body %v", b)
	}
}

func TestPromptsAreDistinctIntegers(t *testing.T) {
	short, long := lab.LabPrompts(0, 128, 1000)
	seen := map[string]bool{}
	for _, p := range short {
		if len(strings.Fields(p)) != 128 || seen[p] {
			t.Fatalf("short prompt %q", p[:40])
		}
		seen[p] = true
	}
	f := strings.Fields(long)
	if len(f) != 1000 || f[0] < "10000" || f[0] > "99999" {
		t.Errorf("long prompt starts %v", f[:3])
	}
	s2, _ := lab.LabPrompts(0, 128, 1000)
	s3, _ := lab.LabPrompts(1, 128, 1000)
	if s2[0] != short[0] || s3[0] == short[0] {
		t.Error("prompts must depend on the seed and only on it")
	}
}

// The workload: every short stream's gaps are recorded relative to the
// injection, the long request is timed, and the file carries both.
func TestMeasureWorkload(t *testing.T) {
	srv := fakeServer(t, func(n int, body map[string]any) script {
		k := int(body["max_tokens"].(float64))
		var fs []string
		for i := 1; i <= k; i++ {
			fs = append(fs, fmt.Sprintf(`data: {"choices":[{"text":"t"}],"usage":{"completion_tokens":%d}}`+"\n\n", i))
		}
		return script{pause: 10 * time.Millisecond, frames: append(fs, "data: [DONE]\n\n")}
	})
	o := opts(srv.URL)
	var events atomic.Int64
	o.Observer = func(e Event) {
		if e.Type == "token" {
			events.Add(1)
		}
	}
	res, err := Measure(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Measured.Summary
	if res.Interrupted || s.Error != "" || s.ShortFailed != 0 || s.ShortCompleted < 4 || s.LongFailed != 0 || s.LongTTFT < 0.005 {
		t.Fatalf("summary %+v", s)
	}
	if math.Abs(s.ITLP50-0.010) > 0.004 {
		t.Errorf("median gap %.2f ms, server paced 10 ms", s.ITLP50*1e3)
	}
	if s.TokensObserved != len(res.Measured.Gaps) || s.TokensObserved != s.ShortCompleted*2 {
		t.Errorf("%d arrivals, %d gaps, %d short requests of 3 tokens", s.TokensObserved, len(res.Measured.Gaps), s.ShortCompleted)
	}
	x := res.Measured.Extra
	if int64(len(x.Frames)) != events.Load() || len(x.Requests) != s.ShortCompleted+1 || len(x.Warnings) != 0 {
		t.Errorf("%d frames, %d events, %d requests, warnings %v", len(x.Frames), events.Load(), len(x.Requests), x.Warnings)
	}
	if res.Measured.Config.Model != "fake-model" {
		t.Errorf("model not discovered: %+v", res.Measured.Config)
	}
	var buf bytes.Buffer
	if err := lab.Write(&buf, res.Measured); err != nil {
		t.Fatal(err)
	}
	if _, err := lab.Read(&buf); err != nil {
		t.Fatal(err)
	}
}

func TestWarnsWhenResponsesAreShortOrBundled(t *testing.T) {
	srv := fakeServer(t, func(n int, body map[string]any) script {
		// One frame with two tokens, then stop: fewer than max_tokens (3).
		return script{pause: 5 * time.Millisecond, frames: []string{
			`data: {"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}` + "\n\n",
			`data: {"choices":[{"text":"bc"}],"usage":{"completion_tokens":2}}` + "\n\n",
			"data: [DONE]\n\n"}}
	})
	res, err := Measure(context.Background(), opts(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Measured.Extra.Warnings, "\n")
	if !strings.Contains(w, "fewer tokens than max_tokens (e.g. 2 of 3)") || !strings.Contains(w, "ignore_eos") {
		t.Errorf("warnings:\n%s", w)
	}
}

// Ctrl-C (the context ending) stops the run and keeps what was measured.
func TestInterruptKeepsPartialResults(t *testing.T) {
	srv := fakeServer(t, func(n int, body map[string]any) script {
		return script{pause: 5 * time.Millisecond, frames: strings.SplitAfter(strings.Repeat(`data: {"choices":[{"text":"a"}]}`+"\n\n", 3), "\n\n")}
	})
	o := opts(srv.URL)
	o.Duration, o.InjectAfter = 30, 20
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Measure(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second || !res.Interrupted || !res.Measured.Extra.Interrupted || res.Measured.Summary.ShortCompleted == 0 {
		t.Errorf("after %v: interrupted=%v summary %+v", time.Since(start), res.Interrupted, res.Measured.Summary)
	}
	if w := strings.Join(res.Measured.Extra.Warnings, "\n"); !strings.Contains(w, "stopped early") || !strings.Contains(w, "never injected") {
		t.Errorf("warnings %q", w)
	}
}

// A lab server killed mid-run: the run stops at once with ErrServerGone and
// what was measured before it died.
func TestServerKilledMidRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.Listener.Close()
	srv.Listener = ln
	var calls atomic.Int64
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 3; i++ {
			io.WriteString(w, `data: {"choices":[{"text":"a"}]}`+"\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	})
	srv.Start()
	o := opts(srv.URL)
	o.Duration, o.InjectAfter = 30, 20
	go func() {
		time.Sleep(300 * time.Millisecond)
		srv.CloseClientConnections()
		srv.Close()
	}()
	start := time.Now()
	res, err := Measure(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second || !res.Interrupted || !errors.Is(res.Stop, ErrServerGone) || res.Measured.Summary.ShortCompleted == 0 {
		t.Fatalf("after %v: interrupted=%v stop=%v summary %+v", time.Since(start), res.Interrupted, res.Stop, res.Measured.Summary)
	}
}

func TestValidate(t *testing.T) {
	for _, mod := range []func(*Options){
		func(o *Options) { o.InjectAfter = o.Duration },
		func(o *Options) { o.API = "responses" },
		func(o *Options) { o.ShortConcurrency = 0 },
		func(o *Options) { o.Timeout = 0 },
		func(o *Options) { o.Duration = math.NaN() },
		func(o *Options) { o.BaseURL = "ftp://x" },
	} {
		o := opts("http://127.0.0.1:1")
		mod(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("accepted %+v", o.Config)
		}
	}
}

func TestReportMatchesScriptLayout(t *testing.T) {
	var b bytes.Buffer
	Report(&b, lab.Summary{Label: "it's", ITLP50: 0.0067, ITLMax: 0.5262, WorstGap: 0.5262, WorstGapOffset: 0.53, SpikeRatio: 78.2,
		LongTTFT: 0.524, LongInputLen: 16000, LongFailed: 1, LongError: "HTTP 400", ShortCompleted: 16, OutputTokS: 1013.4, Wall: 4.03}, "measured")
	out := b.String()
	for _, want := range []string{
		"\nInter-token latency, ms — measured, label=\"it's\"\n             window  p50  p90  p99    max\n-------------------  ---  ---  ---  -----\n          whole run  6.7  0.0  0.0  526.2\n",
		"\nworst gap 526.2 ms, +0.53 s from injection\n", "spike ratio 78.2x", "long-prompt TTFT 524.0 ms (16000 prompt tokens)",
		"  WARNING: 1 long request(s) FAILED -- HTTP 400", "short requests 16 ok, 0 failed, 1013.4 tok/s aggregate over 4.0s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if pyRepr("run") != "'run'" || pyRepr(`a'b"c`) != `'a\'b"c'` {
		t.Error(pyRepr(`a'b"c`))
	}
}

// streamFrom runs one request through the client against handler h.
func streamFrom(t *testing.T, o Options, h http.HandlerFunc) reply {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	o.BaseURL, o.Model = srv.URL, "fake-model"
	m := &measurement{opts: o, client: NewClient(2, true), t0: time.Now()}
	return m.streamOne(context.Background(), "1 2 3", 3, func(time.Time, time.Duration, int, bool, float64) {})
}

// TestEndlessLineIsCut: a server sending a line with no newline gets the
// request failed once the line passes lab.MaxLine, not held in memory whole.
func TestEndlessLineIsCut(t *testing.T) {
	const total = 256 << 20
	var written atomic.Int64
	r := streamFrom(t, opts(""), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		w.Write([]byte("data: "))
		for written.Load() < total {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	if r.ok || !strings.Contains(r.err, "without a newline") {
		t.Errorf("a %d MiB line: ok=%v err=%q, want the request failed for the line", total>>20, r.ok, r.err)
	}
	// The client stops reading at lab.MaxLine; what the server got out beyond it sits in socket buffers.
	if w := written.Load(); w > 2*lab.MaxLine+(16<<20) {
		t.Errorf("the server wrote %d MiB before the client gave up (line limit %d MiB)", w>>20, lab.MaxLine>>20)
	}
}

// TestIdleTimerSeesAGrowingLine: bytes arriving count as activity even while
// no line is complete, so a slow long frame is not taken for a dead server.
func TestIdleTimerSeesAGrowingLine(t *testing.T) {
	o := opts("")
	o.Timeout = 1
	r := streamFrom(t, o, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		io.WriteString(w, `data: {"choices":[{"text":"`)
		for i := 0; i < 40; i++ { // 2 s of one growing line, 50 ms between pieces
			time.Sleep(50 * time.Millisecond)
			io.WriteString(w, strings.Repeat("y", 1000))
			rc.Flush()
		}
		io.WriteString(w, "\"}]}\n\ndata: [DONE]\n\n")
	})
	if !r.ok || r.chunks != 1 {
		t.Errorf("a line growing for 2 s with data every 50 ms (--timeout 1): ok=%v chunks=%d err=%q", r.ok, r.chunks, r.err)
	}
}

// TestWarnsWhenFramesShareOneRead: frames a server (or a loaded client's
// late read) delivers together get one timestamp; the run says so in its
// warnings instead of reporting 0 ms gaps as fact.
func TestWarnsWhenFramesShareOneRead(t *testing.T) {
	srv := fakeServer(t, func(n int, body map[string]any) script {
		k := int(body["max_tokens"].(float64))
		var fs []string
		for i := 1; i <= k; i += 2 { // two frames per write: one read gets both
			f := fmt.Sprintf(`data: {"choices":[{"text":"t"}],"usage":{"completion_tokens":%d}}`+"\n\n", i)
			f += fmt.Sprintf(`data: {"choices":[{"text":"t"}],"usage":{"completion_tokens":%d}}`+"\n\n", i+1)
			fs = append(fs, f)
		}
		return script{pause: 10 * time.Millisecond, frames: append(fs, "data: [DONE]\n\n")}
	})
	o := opts(srv.URL)
	o.ShortOutputLen = 4
	res, err := Measure(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Measured.Extra.Warnings, "\n")
	if !strings.Contains(w, "were 0 ms: those frames were read together") {
		t.Errorf("half the gaps are 0 ms, warnings:\n%s", w)
	}
	var buf bytes.Buffer
	if err := lab.Write(&buf, res.Measured); err != nil || !strings.Contains(buf.String(), "read together") {
		t.Errorf("the saved JSON lacks the warning (%v)", err)
	}
	if SameReadWarning(3, 1000) != "" || SameReadWarning(10, 1000) == "" {
		t.Errorf("SameReadWarning: under 1%% should pass quietly, 1%% should warn")
	}
}

// TestUsageBeyondMaxTokensIsIgnored: a response whose usage says more than
// max_tokens is counted by frames and warned about.
func TestUsageBeyondMaxTokensIsIgnored(t *testing.T) {
	srv := fakeServer(t, func(n int, body map[string]any) script {
		return script{pause: 5 * time.Millisecond, frames: []string{
			`data: {"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}` + "\n\n",
			`data: {"choices":[{"text":"b"}],"usage":{"completion_tokens":9223372036854775807}}` + "\n\n",
			"data: [DONE]\n\n"}}
	})
	res, err := Measure(context.Background(), opts(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Measured.Extra.Requests {
		if r.Tokens > 3 {
			t.Fatalf("a request of max_tokens 3 counted %d tokens", r.Tokens)
		}
	}
	for _, f := range res.Measured.Extra.Frames {
		if f.Tokens != 1 {
			t.Fatalf("a frame counted %d tokens", f.Tokens)
		}
	}
	if w := strings.Join(res.Measured.Extra.Warnings, "\n"); !strings.Contains(w, "more completion_tokens than max_tokens") {
		t.Errorf("warnings:\n%s", w)
	}
}

// redirectingLab answers every request with a 307 to elsewhere, which
// records what reaches it; the returned counter is elsewhere's hits.
func redirectingLab(t *testing.T) (lab *httptest.Server, elsewhere *httptest.Server, hits *atomic.Int64, auth *atomic.Value) {
	hits, auth = new(atomic.Int64), new(atomic.Value)
	elsewhere = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		auth.Store(r.Header.Get("Authorization"))
		io.WriteString(w, `{"data":[{"id":"elsewhere"}]}`)
	}))
	t.Cleanup(elsewhere.Close)
	lab = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(lab.Close)
	return lab, elsewhere, hits, auth
}

// A lab server that redirects (a 307 to another port, say) is not followed:
// the key would go with the requests, to a server nobody configured. The
// run stops at once and says why.
func TestRedirectsAreNeverFollowed(t *testing.T) {
	lab, elsewhere, hits, auth := redirectingLab(t)
	where := strings.TrimPrefix(elsewhere.URL, "http://")

	_, err := DiscoverModel(context.Background(), NewClient(1, false), lab.URL, "sk-key")
	if err == nil || !strings.Contains(err.Error(), "redirect") || !strings.Contains(err.Error(), where) {
		t.Errorf("DiscoverModel through a redirect: %v", err)
	}

	for _, c := range []struct {
		name   string
		client *http.Client
	}{{"NewClient", nil}, {"a caller's plain http.Client", &http.Client{}}} {
		o := opts(lab.URL)
		o.Model, o.APIKey, o.Client = "m", "sk-key", c.client
		o.Duration, o.InjectAfter = 3, 2
		start := time.Now()
		res, err := Measure(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !res.Interrupted || !errors.Is(res.Stop, ErrRedirect) || !strings.Contains(fmt.Sprint(res.Stop), where) {
			t.Errorf("%s: interrupted %v, stop %v; want ErrRedirect naming %s", c.name, res.Interrupted, res.Stop, where)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: the run went on for %v after the first redirect", c.name, d)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests followed the redirect (Authorization %q)", n, auth.Load())
	}
}

// TestStreamOneIsTheSharedReader: what the client makes of a scripted
// server's stream (its frames to the sink and its reply) is exactly what
// lab.StreamReader gives for the bytes it read, with the times it read them;
// and, times aside, what the reader gives for those bytes however cut.
func TestStreamOneIsTheSharedReader(t *testing.T) {
	tok := func(text string, usage int) string {
		return fmt.Sprintf(`data: {"choices":[{"text":%q}],"usage":{"completion_tokens":%d}}`, text, usage)
	}
	for _, c := range []struct {
		name   string
		frames []string
		chunks int
		err    string
	}{
		{"CRLF, bundled, usage-only, malformed, two frames a write, [DONE]", []string{
			": ping\r\n\r\n", tok("a", 1) + "\r\n\r\n", tok("bcd", 4) + "\r\n\r\n", "data: {nope\n\n",
			tok("e", 5) + "\n\n" + tok("f", 6) + "\n\n", `data: {"choices":[],"usage":{"completion_tokens":6}}` + "\n\n",
			"data: [DONE]\n\n", tok("after", 7) + "\n\n"}, 4, ""},
		{"usage beyond max_tokens, then an error frame mid-stream", []string{
			tok("a", 1) + "\n\n", tok("b", 9223372036854775807) + "\n\n", `data: {"choices":[{"text":"c"}],"servelab_t":2.5}` + "\n\n",
			"event: error\ndata: {\"message\":\"engine died\"}\n\n", tok("d", 3) + "\n\n"}, 3, "error frame: engine died"},
		{"a last line without its newline", []string{tok("a", 1) + "\n\n", "da", "ta: " + `{"choices":[{"text":"b"}]}`}, 2, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := fakeServer(t, func(int, map[string]any) script { return script{pause: 2 * time.Millisecond, frames: c.frames} })
			o := opts(srv.URL)
			o.Model = "fake-model"
			type read struct {
				b   []byte
				t   float64
				err error
			}
			var reads []read
			m := &measurement{opts: o, client: NewClient(2, true), t0: time.Now(),
				tap: func(b []byte, t float64, err error) { reads = append(reads, read{bytes.Clone(b), t, err}) }}
			type sunk struct {
				now     time.Time
				gap     time.Duration
				tokens  int
				first   bool
				serverT float64
			}
			var got []sunk
			r := m.streamOne(context.Background(), "1 2 3", 16, func(now time.Time, gap time.Duration, n int, first bool, serverT float64) {
				got = append(got, sunk{now, gap, n, first, serverT})
			})

			// The same reads, with their times, through the shared reader.
			rd := lab.StreamReader{MaxTokens: 16}
			var fs []lab.TokenFrame
			var all []byte
			for _, x := range reads {
				fs = append(fs, rd.Feed(x.b, x.t)...)
				all = append(all, x.b...)
				if errors.Is(x.err, io.EOF) {
					fs = append(fs, rd.End(x.t)...)
				}
			}
			if r.chunks != c.chunks || r.err != c.err || r.ok != (c.err == "") {
				t.Errorf("ok=%v chunks=%d err=%q, want %d chunks and err %q", r.ok, r.chunks, r.err, c.chunks, c.err)
			}
			r.latency = 0
			if want := replyOf(&rd); !reflect.DeepEqual(r, want) {
				t.Errorf("reply %+v, the reader's %+v", r, want)
			}
			if len(got) != len(fs) {
				t.Fatalf("%d frames to the sink, the reader's %d: %+v", len(got), len(fs), fs)
			}
			for i, f := range fs {
				g := got[i]
				if g.gap != time.Duration(f.Gap) || g.tokens != f.Tokens || g.first != f.First || g.serverT != f.ServelabT ||
					g.now.Sub(got[0].now) != time.Duration(f.T-fs[0].T) {
					t.Errorf("frame %d: sink %+v, reader %+v", i, g, f)
				}
			}
			if r.ttft != time.Duration(fs[0].T) {
				t.Errorf("ttft %v, the reader's first frame at %v", r.ttft, time.Duration(fs[0].T))
			}

			// Whatever the reads were, the bytes give the same frames, times aside.
			for _, size := range []int{1, 3, 7, len(all)} {
				one := lab.StreamReader{MaxTokens: 16}
				var ofs []lab.TokenFrame
				for at := 0; at < len(all); at += size {
					ofs = append(ofs, one.Feed(all[at:min(at+size, len(all))], float64(at))...)
				}
				ofs = append(ofs, one.End(float64(len(all)))...)
				w := replyOf(&one)
				if w.chunks != r.chunks || w.tokens != r.tokens || w.usage != r.usage || w.bundled != r.bundled ||
					w.badUsage != r.badUsage || w.malformed != r.malformed || w.err != r.err || w.ok != r.ok || len(ofs) != len(got) {
					t.Fatalf("reads of %d bytes: %+v, the client %+v", size, w, r)
				}
				for i, f := range ofs {
					if g := got[i]; g.tokens != f.Tokens || g.first != f.First || g.serverT != f.ServelabT {
						t.Errorf("reads of %d bytes, frame %d: %+v, the client's %+v", size, i, f, g)
					}
				}
			}
		})
	}
}
