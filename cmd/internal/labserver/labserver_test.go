package labserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"servelab/sim"
)

func stepModel(t testing.TB) sim.StepModel {
	s, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// start runs a lab server on loopback; mod adjusts the default config.
func start(t testing.TB, mod func(*Config)) (*Server, string) {
	t.Helper()
	pol, _ := sim.NewPolicy("chunked", 2048)
	cfg := Config{Engine: sim.Config{Step: stepModel(t), Policy: pol}, ModelName: "lab-model"}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { s.Close(); hs.Close() })
	return s, hs.URL
}

// frame is one SSE data line as a test client saw it.
type frame struct {
	at   time.Time
	data map[string]any
	raw  string
}

// openStream posts body to path and collects every data frame until [DONE] or EOF.
func openStream(t testing.TB, ctx context.Context, url, path, body string) (*http.Response, []frame, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return resp, []frame{{raw: string(b)}}, nil
	}
	br := bufio.NewReader(resp.Body)
	var out []frame
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return resp, out, err
		}
		now := time.Now()
		line = strings.TrimSpace(line)
		payload, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if payload == "[DONE]" {
			out = append(out, frame{at: now, raw: payload})
			return resp, out, nil
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(payload), &d); err != nil {
			t.Errorf("bad JSON frame %q: %v", payload, err)
		}
		out = append(out, frame{at: now, data: d, raw: payload})
	}
}

func words(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d ", 10000+i)
	}
	return b.String()
}

func TestCompletionStreamShape(t *testing.T) {
	_, url := start(t, nil)
	resp, fs, err := openStream(t, context.Background(), url, "/v1/completions",
		`{"model":"lab-model","prompt":"`+words(20)+`","max_tokens":5,"stream":true,"ignore_eos":true,
		  "stream_options":{"include_usage":true,"continuous_usage_stats":true}}`)
	if err != nil {
		t.Fatal(err)
	}
	if h := resp.Header.Get("X-Accel-Buffering"); h != "no" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("headers %v", resp.Header)
	}
	// 5 token frames, a usage-only frame, [DONE].
	if len(fs) != 7 || fs[6].raw != "[DONE]" {
		t.Fatalf("frames %d: %v", len(fs), fs)
	}
	for i := 0; i < 5; i++ {
		c := fs[i].data["choices"].([]any)[0].(map[string]any)
		u := fs[i].data["usage"].(map[string]any)
		if c["text"] == "" || u["completion_tokens"] != float64(i+1) || u["prompt_tokens"] != float64(20) {
			t.Errorf("frame %d: %s", i, fs[i].raw)
		}
		if want := map[bool]any{true: "length", false: nil}[i == 4]; c["finish_reason"] != want {
			t.Errorf("frame %d finish_reason %v", i, c["finish_reason"])
		}
	}
	if ch := fs[5].data["choices"].([]any); len(ch) != 0 || fs[5].data["usage"].(map[string]any)["completion_tokens"] != float64(5) {
		t.Errorf("usage frame %s", fs[5].raw)
	}
}

func TestChatStreamHasRoleChunkAndFrameInterval(t *testing.T) {
	_, url := start(t, func(c *Config) { c.StreamInterval = 3 })
	_, fs, err := openStream(t, context.Background(), url, "/v1/chat/completions",
		`{"messages":[{"role":"user","content":"`+words(10)+`"}],"max_tokens":7,"stream":true,
		  "stream_options":{"include_usage":true,"continuous_usage_stats":true}}`)
	if err != nil {
		t.Fatal(err)
	}
	// role chunk, then frames of 1 (first token at once), 3, 3 tokens, usage, [DONE].
	delta := func(i int) map[string]any {
		return fs[i].data["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
	}
	if len(fs) != 6 || delta(0)["role"] != "assistant" || delta(0)["content"] != "" {
		t.Fatalf("frames %v", fs)
	}
	for i, want := range []float64{1, 4, 7} {
		if u := fs[i+1].data["usage"].(map[string]any)["completion_tokens"]; u != want {
			t.Errorf("frame %d completion_tokens %v, want %v", i+1, u, want)
		}
		if n := len(strings.Fields(delta(i + 1)["content"].(string))); n != []int{1, 3, 3}[i] {
			t.Errorf("frame %d carries %d words", i+1, n)
		}
	}
}

func TestNonStreamAndNaturalLength(t *testing.T) {
	_, url := start(t, func(c *Config) { c.NaturalLen = 3 })
	post := func(body string) map[string]any {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("status %d: %v %v", resp.StatusCode, err, out)
		}
		return out
	}
	got := post(`{"messages":[{"role":"user","content":[{"type":"text","text":"a b c"}]}],"max_tokens":8}`)
	ch := got["choices"].([]any)[0].(map[string]any)
	if got["usage"].(map[string]any)["completion_tokens"] != float64(3) || ch["finish_reason"] != "stop" {
		t.Errorf("without ignore_eos: %v", got)
	}
	got = post(`{"messages":[{"role":"user","content":"a b c"}],"max_tokens":8,"ignore_eos":true}`)
	ch = got["choices"].([]any)[0].(map[string]any)
	msg := ch["message"].(map[string]any)["content"].(string)
	if got["usage"].(map[string]any)["completion_tokens"] != float64(8) || ch["finish_reason"] != "length" || len(strings.Fields(msg)) != 8 {
		t.Errorf("with ignore_eos: %v", got)
	}
}

func TestErrorsAreOpenAIStyle(t *testing.T) {
	_, url := start(t, func(c *Config) { c.MaxModelLen = 100; c.APIKey = "sekret" })
	for _, c := range []struct {
		method, path, auth, body string
		status                   int
		want                     string
	}{
		{"POST", "/v1/completions", "", `{"prompt":"x","max_tokens":1}`, 401, "API key"},
		{"POST", "/v1/completions", "Bearer wrong", `{"prompt":"x","max_tokens":1}`, 401, "API key"},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"` + words(95) + `","max_tokens":10}`, 400, "maximum context length is 100 tokens. However, you requested 105 tokens (95 in the prompt, 10 in the completion)"},
		{"POST", "/v1/chat/completions", "Bearer sekret", `{"messages":[{"role":"user","content":"` + words(99) + `"}],"max_tokens":2}`, 400, "(99 in the messages, 2 in the completion)"},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"x","model":"gpt-9"}`, 404, "The model `gpt-9` does not exist."},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"x",`, 400, "not valid JSON"},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"x","max_tokens":0}`, 400, "max_tokens must be an integer"},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"x","max_tokens":1.5}`, 400, "max_tokens must be an integer"},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"x","n":2}`, 400, "n=1"},
		{"POST", "/v1/completions", "Bearer sekret", `{"max_tokens":1}`, 400, "prompt is required"},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"   "}`, 400, "empty"},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":{"a":1}}`, 400, "prompt must be"},
		{"POST", "/v1/chat/completions", "Bearer sekret", `{"messages":[]}`, 400, "messages must be"},
		{"POST", "/v1/chat/completions", "Bearer sekret", `{"messages":[{"content":"x"}]}`, 400, "role is required"},
		// Keys are matched exactly, as vLLM does: a key that only folds to a field is refused, never taken for it.
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"x","max_to\u212aens":2000}`, 400, `did you mean "max_tokens"`},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"x","max_token\u017f":2000}`, 400, `did you mean "max_tokens"`},
		{"POST", "/v1/chat/completions", "Bearer sekret", `{"messages":[{"role":"user","content":"x"}],"max_completion_tokens":5,"Max_Tokens":2000}`, 400, `did you mean "max_tokens"`},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"x","stream_options":{"Include_Usage":true}}`, 400, `did you mean "stream_options.include_usage"`},
		{"POST", "/v1/chat/completions", "Bearer sekret", `{"messages":[{"ROLE":"user","content":"x"}]}`, 400, `did you mean "role"`},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"x","stream_options":{"include_usage":"yes"}}`, 400, "stream_options.include_usage: wrong type"},
		{"POST", "/v1/completions", "Bearer sekret", `{"prompt":"x","max_tokens":"many"}`, 400, "max_tokens: wrong type"},
		{"POST", "/v1/completions", "Bearer sekret", `[1,2]`, 400, "must be a JSON object, got array"},
		{"GET", "/v1/completions", "Bearer sekret", ``, 405, "POST"},
		{"GET", "/v2/whatever", "Bearer sekret", ``, 404, "no route"},
	} {
		req, _ := http.NewRequest(c.method, url+c.path, strings.NewReader(c.body))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != c.status || body.Error.Code != c.status || !strings.Contains(body.Error.Message, c.want) || body.Error.Type == "" {
			t.Errorf("%s %s %s: status %d, body %+v (%v); want %d and %q", c.method, c.path, c.body, resp.StatusCode, body, err, c.status, c.want)
		}
	}
}

// TestBodyLimitFollowsContext: the default body limit is sized to the
// context (a few MiB for 131072 tokens), not tens of MiB.
func TestBodyLimitFollowsContext(t *testing.T) {
	s, url := start(t, func(c *Config) { c.MaxModelLen = 131072; c.TimeScale = 1e-3 })
	limit := s.Config().MaxBodyBytes
	if limit < 131072*6 || limit > 4<<20 {
		t.Fatalf("default body limit %d bytes for a 131072-token context; want room for run.py's prompt (6 B/token) and at most 4 MiB", limit)
	}
	// The longest prompt run.py sends for this context fits; a bigger body is refused with 413.
	ok := `{"prompt":"` + words(131000) + `","max_tokens":1}`
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(ok))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a %d-byte body with a 131000-token prompt: status %d", len(ok), resp.StatusCode)
	}
	big := `{"prompt":"x","pad":"` + strings.Repeat("a", int(limit)) + `"}`
	resp, err = http.Post(url+"/v1/completions", "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || !strings.Contains(string(b), "larger than") {
		t.Errorf("a body over the limit: %d %s", resp.StatusCode, b)
	}
}

func TestModels(t *testing.T) {
	_, url := start(t, nil)
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || len(m.Data) != 1 || m.Data[0].ID != "lab-model" || m.Data[0].MaxModelLen != 131072 {
		t.Errorf("%v %+v", err, m)
	}
}

// gaps returns the gaps between a stream's token frames.
func gaps(fs []frame) []float64 {
	var out []float64
	var last time.Time
	for _, f := range fs {
		if f.data == nil {
			continue
		}
		if ch, _ := f.data["choices"].([]any); len(ch) == 0 {
			continue
		}
		if !last.IsZero() {
			out = append(out, f.at.Sub(last).Seconds())
		}
		last = f.at
	}
	return out
}

// One stream alone: every gap is the simulator's decode step for batch 1 at
// its context; and a long prompt arriving mid-stream stalls it for exactly
// the prefill step the simulator prices.
func TestStreamsFollowTheEngineClock(t *testing.T) {
	step := stepModel(t)
	pf, _ := sim.NewPolicy("prefill-first", 0)
	_, url := start(t, func(c *Config) { c.Engine.Policy = pf })
	var wg sync.WaitGroup
	var short []frame
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, fs, err := openStream(t, context.Background(), url, "/v1/completions",
			`{"prompt":"`+words(100)+`","max_tokens":120,"stream":true,"ignore_eos":true}`)
		if err != nil {
			t.Error(err)
		}
		short = fs
	}()
	time.Sleep(300 * time.Millisecond)
	const long = 8000
	_, lf, err := openStream(t, context.Background(), url, "/v1/completions",
		`{"prompt":"`+words(long)+`","max_tokens":2,"stream":true,"ignore_eos":true}`)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(lf) != 3 {
		t.Fatalf("long stream frames %v", lf)
	}
	g := gaps(short)
	if len(g) != 119 {
		t.Fatalf("%d gaps", len(g))
	}
	decode := step.Decode(1, 150).Seconds
	sorted := append([]float64(nil), g...)
	med := sim.Percentile(sorted, 50)
	if math.Abs(med-decode) > 0.5e-3 {
		t.Errorf("median gap %.3f ms, simulator's decode step %.3f ms", med*1e3, decode*1e3)
	}
	// The stall: one prefill-only step of the long prompt, then the decode
	// step (of both sequences) that produces the short stream's next token.
	want := step.Prefill(long).Seconds + step.Mixed(2, 300+long, 0).Seconds
	worst := sorted[len(sorted)-1]
	if math.Abs(worst-want) > 0.10*want {
		t.Errorf("worst gap %.1f ms, simulator says %.1f ms (prefill %.1f ms)", worst*1e3, want*1e3, step.Prefill(long).Seconds*1e3)
	}
}

// The self-test's promise: every stream gets a token every cadence, on one
// grid, and each frame says when it was sent, so that a client can tell its
// own timing error from the server's. On a busy machine the server may fall
// behind the grid and catch up (its frames then late, its own stats say by
// how much): the checks hold against that observed lateness, and the
// server's precision itself is bench-lab's figure, not a unit test's.
func TestCadenceSelfTest(t *testing.T) {
	const d = 5 * time.Millisecond
	const n = 40
	s, url := start(t, func(c *Config) { c.Cadence = d })
	var wg sync.WaitGroup
	var mu sync.Mutex
	var spans []float64 // per stream: last send stamp minus first
	var clientErr []float64
	all := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, fs, err := openStream(t, context.Background(), url, "/v1/completions", fmt.Sprintf(`{"prompt":"x","max_tokens":%d,"stream":true}`, n))
			if err != nil {
				t.Error(err)
			}
			// Every token frame carries the server's send time, rising; the
			// client's gaps are the server's send gaps plus its own error.
			var prev float64
			var stamps []float64
			for i, f := range fs[:len(fs)-1] {
				st, ok := f.data["servelab_t"].(float64)
				if !ok || st < prev {
					t.Errorf("frame %d: servelab_t %v after %v", i, f.data["servelab_t"], prev)
				}
				stamps = append(stamps, st)
				prev = st
			}
			g := gaps(fs)
			mu.Lock()
			defer mu.Unlock()
			all += len(g)
			if len(stamps) == n && len(g) == n-1 {
				spans = append(spans, stamps[n-1]-stamps[0])
				for i, x := range g {
					clientErr = append(clientErr, math.Abs(x-(stamps[i+1]-stamps[i])))
				}
			}
		}()
	}
	wg.Wait()
	if all != 8*(n-1) || len(spans) != 8 {
		t.Fatalf("%d gaps, %d whole streams", all, len(spans))
	}
	// The handlers record a frame after writing it; let the last ones finish.
	for i := 0; i < 100 && s.Stats(false).Active > 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	st := s.Stats(false)
	if st.Frames != 8*n || st.Mode != "cadence" {
		t.Errorf("stats %+v", st)
	}
	// Each stream's frames were sent on the grid: n-1 cadences from its
	// first to its last, give or take the lateness the server reports (a
	// first frame sent late, a last one on time). A server off its cadence
	// (a token every 2.5 ms, or every 10) is off by many cadences.
	late := st.LateMaxms / 1e3
	for _, span := range spans {
		if want := float64(n-1) * d.Seconds(); math.Abs(span-want) > late+0.3e-3 {
			t.Errorf("a stream's frames were sent over %.2f ms, want %d cadences, %.1f ms, give or take the server's lateness %.2f ms", span*1e3, n-1, want*1e3, late*1e3)
		}
	}
	// What a client measures is what was sent: its median error is small.
	if med := sim.Percentile(clientErr, 50); med > 0.3e-3 {
		t.Errorf("the client's gaps are %.3f ms (median) off the server's send gaps", med*1e3)
	}
	t.Logf("server late p50 %.2f ms, max %.2f ms; client error p50 %.3f ms", st.LateP50ms, st.LateMaxms, 1e3*sim.Percentile(clientErr, 50))
}

// Clients that vanish mid-stream cost the server nothing lasting: their
// handlers end, and the next client is served on time.
func TestSurvivesClientsVanishing(t *testing.T) {
	srv, url := start(t, nil)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, _ = openStream(t, ctx, url, "/v1/completions", `{"prompt":"a b c","max_tokens":400,"stream":true}`)
		}()
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	wg.Wait()
	_, fs, err := openStream(t, context.Background(), url, "/v1/completions", `{"prompt":"a b c","max_tokens":5,"stream":true}`)
	if err != nil || len(fs) != 6 {
		t.Fatalf("after the vanishing clients: %v %d frames", err, len(fs))
	}
	// Their requests were aborted in the engine, not left decoding for nobody.
	if st := srv.Stats(false); st.Running > 1 {
		t.Errorf("%d sequences still decoding after their clients left", st.Running)
	}
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before+5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+5 {
		t.Errorf("%d goroutines, %d before: handlers leaked", n, before)
	}
}

func TestCloseEndsStreamsWithErrorFrame(t *testing.T) {
	s, url := start(t, nil)
	done := make(chan []frame)
	go func() {
		_, fs, _ := openStream(t, context.Background(), url, "/v1/completions", `{"prompt":"a","max_tokens":100000,"stream":true}`)
		done <- fs
	}()
	time.Sleep(100 * time.Millisecond)
	s.Close()
	select {
	case fs := <-done:
		if len(fs) == 0 || fs[len(fs)-1].data["error"] == nil {
			t.Errorf("last frame %v", fs[len(fs)-1].raw)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("stream did not end on Close")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, c := range []Config{
		{TimeScale: -1}, {StreamInterval: -2}, {Cadence: time.Nanosecond}, {TokensPerWord: math.NaN()}, {NaturalLen: -1},
	} {
		c.Engine.Step = stepModel(t)
		if s, err := New(c); err == nil {
			s.Close()
			t.Errorf("%+v accepted", c)
		}
	}
}

// A client that gives up while its long prompt is still prefilling is
// aborted at once, not after the whole prefill stalled everyone else.
func TestClientLeavingDuringPrefillIsAborted(t *testing.T) {
	srv, url := start(t, nil) // chunked, budget 2048: a 60k-word prompt takes seconds of chunks
	go openStream(t, context.Background(), url, "/v1/completions", `{"prompt":"a b c","max_tokens":600,"stream":true,"ignore_eos":true}`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, _ = openStream(t, ctx, url, "/v1/completions", `{"prompt":"`+words(60000)+`","max_tokens":4,"stream":true}`)
	}()
	deadline := time.Now().Add(3 * time.Second)
	for srv.Stats(false).Waiting == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if srv.Stats(false).Waiting == 0 {
		t.Fatal("the long prompt never started prefilling")
	}
	cancel()
	<-done
	time.Sleep(400 * time.Millisecond) // a few decode steps, far less than the rest of the prefill
	if st := srv.Stats(false); st.Waiting != 0 {
		t.Errorf("%d sequences still prefilling after their client left", st.Waiting)
	}
}

func TestSlotsKeepEachStreamsPlace(t *testing.T) {
	sl := newSlots(2)
	var sts []*stream
	for i := 0; i < 5; i++ {
		st := &stream{id: i}
		sl.place(st, 10*time.Microsecond, 1)
		sts = append(sts, st)
	}
	// One stream per writer has room, then the least loaded writer's lowest
	// free slot: 0/0, 1/0, 0/1, 1/1, 0/2.
	for i, st := range sts {
		if st.writer != i%2 || st.slot != i/2 || st.offset != time.Duration(i/2)*10*time.Microsecond {
			t.Errorf("stream %d: writer %d slot %d offset %v", i, st.writer, st.slot, st.offset)
		}
	}
	sl.place(sts[4], time.Millisecond, 1) // placed once: nothing moves
	if sts[4].slot != 2 || sts[4].offset != 20*time.Microsecond {
		t.Errorf("a placed stream moved: slot %d offset %v", sts[4].slot, sts[4].offset)
	}
	// A stream that ends frees its slot for the next newcomer on that
	// writer; the others keep their offsets even though the gap changed.
	sl.release(sts[0])
	sl.release(sts[0]) // twice is harmless
	if sts[0].slot != -1 || sts[0].writer != 0 {
		t.Errorf("released stream: writer %d slot %d (its writer must stay for a failure frame)", sts[0].writer, sts[0].slot)
	}
	nw := &stream{id: 9}
	sl.place(nw, 30*time.Microsecond, 1)
	if nw.writer != 0 || nw.slot != 0 || nw.offset != 0 {
		t.Errorf("newcomer: writer %d slot %d offset %v, want writer 0's freed slot 0", nw.writer, nw.slot, nw.offset)
	}
	nw2 := &stream{id: 10}
	sl.place(nw2, 30*time.Microsecond, 1)
	if nw2.writer != 1 || nw2.slot != 2 || nw2.offset != 60*time.Microsecond {
		t.Errorf("second newcomer: writer %d slot %d offset %v, want the less loaded writer 1, slot 2 at the new gap, 60µs", nw2.writer, nw2.slot, nw2.offset)
	}
	for i, st := range sts[1:] {
		if want := time.Duration((i+1)/2) * 10 * time.Microsecond; st.offset != want {
			t.Errorf("stream %d's offset moved to %v", i+1, st.offset)
		}
	}
	if sl.most() != 3 {
		t.Errorf("most = %d, want 3", sl.most())
	}
}

func TestSlotsFillOneWriterFirst(t *testing.T) {
	sl := newSlots(3)
	for i := 0; i < 5; i++ {
		st := &stream{id: i}
		sl.place(st, time.Microsecond, 3)
		if want := i / 3; st.writer != want {
			t.Errorf("stream %d on writer %d, want %d: a writer takes perWriter streams before the next wakes", i, st.writer, want)
		}
	}
}

func TestScheduleFollowsWritesAndFitsThePeriod(t *testing.T) {
	s := &Server{slots: newSlots(1), cost: make([]atomic.Int64, 2)}
	s.cost[0].Store(int64(8 * time.Microsecond))
	s.cost[1].Store(int64(12 * time.Microsecond)) // the slowest writer sets it
	gap, per := s.schedule(20*time.Millisecond, 0)
	if gap != 24*time.Microsecond || per != 416 {
		t.Errorf("gap %v, %d per writer; want twice the slowest write, 24µs, and 10 ms / 24µs = 416", gap, per)
	}
	for i := 0; i < 1000; i++ {
		s.slots.place(&stream{id: i}, time.Microsecond, 1000)
	}
	// A thousand slots must fit in half of a 20 ms period: 10µs each.
	if gap, _ := s.schedule(20*time.Millisecond, 0); gap != 10*time.Microsecond {
		t.Errorf("gap %v with 1000 slots in 20 ms, want 10µs", gap)
	}
	if gap, per := s.schedule(time.Microsecond, 0); gap != minGap || per != 1 {
		t.Errorf("gap %v, %d per writer for a tiny period, want the floor %v and 1", gap, per, minGap)
	}
	// The self-test spreads its slots over the half period, up to maxGap.
	c := &Server{cfg: Config{Cadence: 20 * time.Millisecond}, slots: newSlots(1), cost: make([]atomic.Int64, 1)}
	c.cost[0].Store(int64(10 * time.Microsecond))
	for i := 0; i < 256; i++ {
		c.slots.place(&stream{id: i}, time.Microsecond, 1000)
	}
	if gap, _ := c.schedule(20*time.Millisecond, 0); gap != 39*time.Microsecond {
		t.Errorf("self-test gap %v for 256 streams in 20 ms, want 10 ms / 256 ≈ 39µs", gap)
	}
	// Streams in flight but not placed yet count too: the first to be
	// placed must leave room for the rest.
	f := &Server{cfg: Config{Cadence: 20 * time.Millisecond}, slots: newSlots(1), cost: make([]atomic.Int64, 1)}
	f.cost[0].Store(int64(10 * time.Microsecond))
	if gap, _ := f.schedule(20*time.Millisecond, 256); gap != 39*time.Microsecond {
		t.Errorf("self-test gap %v for 256 streams about to be placed, want 39µs", gap)
	}
}

// TestPrefixCachingReportsCachedTokens: with prefix caching on, a chat
// request repeating an earlier one's long system message reports the
// cached prompt tokens in usage.prompt_tokens_details, as vLLM does, and
// gets its first token sooner; with caching off usage has no details.
func TestPrefixCachingReportsCachedTokens(t *testing.T) {
	system := words(3000)
	body := func(q string) string {
		return `{"model":"lab-model","max_tokens":4,"stream":true,"ignore_eos":true,"stream_options":{"include_usage":true},
		  "messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"` + q + `"}]}`
	}
	usage := func(fs []frame) map[string]any {
		for _, f := range fs {
			if u, ok := f.data["usage"].(map[string]any); ok {
				return u
			}
		}
		t.Fatalf("no usage frame in %v", fs)
		return nil
	}
	// ttft is the time to the first content frame.
	ask := func(url, q string) (map[string]any, time.Duration) {
		t0 := time.Now()
		_, fs, err := openStream(t, context.Background(), url, "/v1/chat/completions", body(q))
		if err != nil {
			t.Fatal(err)
		}
		return usage(fs), fs[1].at.Sub(t0)
	}
	_, url := start(t, func(c *Config) { c.Engine.Limits.PrefixCaching = true; c.TimeScale = 20 })
	u1, t1 := ask(url, "what is a cache")
	u2, t2 := ask(url, "why is it fast")
	d1, _ := u1["prompt_tokens_details"].(map[string]any)
	d2, _ := u2["prompt_tokens_details"].(map[string]any)
	if d1 == nil || d1["cached_tokens"] != float64(0) {
		t.Errorf("first request's usage %v: want cached_tokens 0", u1)
	}
	c2, _ := d2["cached_tokens"].(float64)
	if p := u2["prompt_tokens"].(float64); c2 < 2900 || c2 >= p {
		t.Errorf("second request's usage %v: want about the 3000-word system message cached, below its %g prompt tokens", u2, p)
	}
	if t2 >= t1 {
		t.Errorf("the cached request's first token came after %v, the first's after %v", t2, t1)
	}
	_, plain := start(t, nil)
	if u, _ := ask(plain, "what is a cache"); u["prompt_tokens_details"] != nil {
		t.Errorf("caching off: usage %v has details", u)
	}
}

// TestSpeculationStreamsEveryToken: with speculative decoding a step may
// give a stream several tokens; every one of max_tokens still arrives, in
// fewer frames than tokens.
func TestSpeculationStreamsEveryToken(t *testing.T) {
	_, url := start(t, func(c *Config) {
		c.Engine.Spec = sim.Speculation{K: 4, Accept: []float64{0.9}, DraftCost: 0.05, Seed: 1}
	})
	_, fs, err := openStream(t, context.Background(), url, "/v1/completions",
		`{"model":"lab-model","prompt":"`+words(50)+`","max_tokens":60,"stream":true,"ignore_eos":true,"stream_options":{"include_usage":true}}`)
	if err != nil {
		t.Fatal(err)
	}
	text, frames := "", 0
	for _, f := range fs {
		if ch, ok := f.data["choices"].([]any); ok && len(ch) > 0 {
			text += ch[0].(map[string]any)["text"].(string)
			frames++
		}
	}
	u := fs[len(fs)-2].data["usage"].(map[string]any)
	if u["completion_tokens"] != float64(60) || len(strings.Fields(text)) != 60 {
		t.Errorf("usage %v, %d words of text: want 60 tokens", u, len(strings.Fields(text)))
	}
	if frames >= 40 {
		t.Errorf("%d token frames for 60 tokens: speculation gave one token a step", frames)
	}
}
