package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLab is a lab server that streams one frame per token, each frame only
// when the test releases it, and records what reached it.
type fakeLab struct {
	*httptest.Server
	hits    atomic.Int32
	release chan struct{}
	mu      sync.Mutex
	bodies  []map[string]any
	auth    []string
}

func newFakeLab(t *testing.T, tokens int) *fakeLab {
	lab := &fakeLab{release: make(chan struct{}, 100)}
	lab.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lab.hits.Add(1)
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		lab.mu.Lock()
		lab.bodies = append(lab.bodies, body)
		lab.auth = append(lab.auth, r.Header.Get("Authorization"))
		lab.mu.Unlock()
		switch r.URL.Path {
		case "/v1/models":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"data":[{"id":"fake"}]}`)
			return
		case "/v1/completions", "/v1/chat/completions":
		default:
			http.Error(w, `{"error":{"message":"no such path"}}`, http.StatusNotFound)
			return
		}
		if body["prompt"] == "fail" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"prompt rejected, key was sk-secret"}}`)
			return
		}
		if body["stream"] != true {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"text":"whole"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for i := 0; i < tokens; i++ {
			select {
			case <-lab.release:
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\"t%d\"}]}\r\n\r\n", i)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(lab.Close)
	return lab
}

func newTestProxy(t *testing.T, lab *fakeLab, mod func(*Config)) *httptest.Server {
	cfg := Config{Upstream: lab.URL + "/v1", APIKey: "sk-secret", MaxBodyBytes: 1024, MaxTokens: 64, Client: NoRedirectClient()}
	if mod != nil {
		mod(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv
}

func TestRelaysFramesAsTheyArrive(t *testing.T) {
	lab := newFakeLab(t, 3)
	srv := newTestProxy(t, lab, nil)
	resp, err := http.Post(srv.URL+"/api/v1/completions", "application/json",
		strings.NewReader(`{"model":"m","prompt":"hi","max_tokens":3,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	rd := bufio.NewReader(resp.Body)
	next := func() string {
		t.Helper()
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			if strings.HasPrefix(line, "data:") {
				return strings.TrimSpace(line)
			}
		}
	}
	// Each frame must come through before the lab server sends the next: a
	// proxy that buffered would block here, since the next is never released.
	for i := 0; i < 3; i++ {
		lab.release <- struct{}{}
		got := make(chan string, 1)
		go func() { got <- next() }()
		select {
		case line := <-got:
			if want := fmt.Sprintf(`data: {"choices":[{"text":"t%d"}]}`, i); line != want {
				t.Fatalf("frame %d = %q, want %q", i, line, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("frame %d did not arrive before the next was sent: buffered", i)
		}
	}
	if line := next(); line != "data: [DONE]" {
		t.Fatalf("last frame %q", line)
	}
	lab.mu.Lock()
	defer lab.mu.Unlock()
	if lab.auth[0] != "Bearer sk-secret" {
		t.Errorf("upstream Authorization %q, want the configured key", lab.auth[0])
	}
}

func post(t *testing.T, url, body string, hdr map[string]string) (*http.Response, ErrorBody) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var eb ErrorBody
	json.Unmarshal(raw, &eb)
	if strings.Contains(string(raw), "sk-secret") || strings.Contains(string(raw), "127.0.0.1") {
		t.Errorf("answer leaks configuration: %s", raw)
	}
	return resp, eb
}

func TestRefusalsNeverReachTheLab(t *testing.T) {
	lab := newFakeLab(t, 1)
	srv := newTestProxy(t, lab, nil)
	api := srv.URL + "/api/v1/completions"
	ok := `{"prompt":"x","max_tokens":4}`
	cases := []struct {
		name, url, body string
		hdr             map[string]string
		status          int
		code            string
	}{
		{"body names another server", api, `{"prompt":"x","base_url":"http://evil.example/v1"}`, nil, 403, CodeUpstreamDenied},
		{"body url field", api, `{"prompt":"x","url":"http://169.254.169.254/"}`, nil, 403, CodeUpstreamDenied},
		{"query names another server", api + "?upstream=http://evil.example", ok, nil, 403, CodeUpstreamDenied},
		{"header names another server", api, ok, map[string]string{"X-Upstream": "http://evil.example"}, 403, CodeUpstreamDenied},
		{"oversize body", api, `{"prompt":"` + strings.Repeat("a", 2000) + `"}`, nil, 413, CodeBodyTooLarge},
		{"max_tokens over limit", api, `{"prompt":"x","max_tokens":65}`, nil, 400, CodeMaxTokens},
		{"max_tokens not a number", api, `{"prompt":"x","max_tokens":"lots"}`, nil, 400, CodeInvalidRequest},
		{"max_tokens with a Kelvin sign", api, `{"prompt":"x","max_to\u212aens":2000}`, nil, 400, CodeInvalidRequest},
		{"max_tokens with a long s", api, `{"prompt":"x","max_token\u017f":2000}`, nil, 400, CodeInvalidRequest},
		{"Max_Tokens beside max_completion_tokens", srv.URL + "/api/v1/chat/completions", `{"messages":[],"max_completion_tokens":5,"Max_Tokens":2000}`, nil, 400, CodeInvalidRequest},
		{"raw UTF-8 Kelvin sign", api, "{\"prompt\":\"x\",\"MAX_TO\u212aENS\":2000}", nil, 400, CodeInvalidRequest},
		{"two unknown keys folding together", api, `{"prompt":"x","foo":1,"FOO":2}`, nil, 400, CodeInvalidRequest},
		{"n > 1", api, `{"prompt":"x","n":4}`, nil, 400, CodeInvalidRequest},
		{"not JSON", api, `prompt=x`, nil, 400, CodeBadJSON},
		{"two objects", api, `{"prompt":"x"}{"prompt":"y"}`, nil, 400, CodeBadJSON},
		{"no prompt", api, `{"model":"m"}`, nil, 400, CodeInvalidRequest},
		{"chat without messages", srv.URL + "/api/v1/chat/completions", `{"prompt":"x"}`, nil, 400, CodeInvalidRequest},
		{"chat max_completion_tokens over", srv.URL + "/api/v1/chat/completions", `{"messages":[],"max_completion_tokens":1000}`, nil, 400, CodeMaxTokens},
		{"other route", srv.URL + "/api/v1/embeddings", ok, nil, 404, CodeNotFound},
		{"path smuggling", srv.URL + "/api/http:/evil.example/v1/completions", ok, nil, 404, CodeNotFound},
		{"foreign page", api, ok, map[string]string{"Origin": "https://evil.example"}, 403, CodeOriginDenied},
		{"form body", api, ok, map[string]string{"Content-Type": "text/plain"}, 415, CodeMediaType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, eb := post(t, c.url, c.body, c.hdr)
			if resp.StatusCode != c.status || eb.Error.Code != c.code || eb.Error.Message == "" {
				t.Errorf("got %d %+v, want %d %s", resp.StatusCode, eb.Error, c.status, c.code)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("error Content-Type %q", ct)
			}
		})
	}
	if n := lab.hits.Load(); n != 0 {
		t.Fatalf("%d refused requests reached the lab server", n)
	}
	resp, err := http.Get(api)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("GET on a POST route: %d", resp.StatusCode)
	}
}

func TestForwardsOnlyWhatItChecked(t *testing.T) {
	lab := newFakeLab(t, 0)
	srv := newTestProxy(t, lab, nil)
	// The same server named by the client is fine; the field is not passed on,
	// a missing max_tokens gets the limit and the client's credentials are dropped.
	resp, _ := post(t, srv.URL+"/api/v1/completions",
		fmt.Sprintf(`{"prompt":"x","base_url":%q}`, lab.URL+"/v1/"),
		map[string]string{"Authorization": "Bearer client-key", "Origin": srv.URL})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	lab.mu.Lock()
	body, auth := lab.bodies[0], lab.auth[0]
	lab.mu.Unlock()
	if body["max_tokens"] != float64(64) {
		t.Errorf("max_tokens upstream = %v, want the limit 64", body["max_tokens"])
	}
	if _, ok := body["base_url"]; ok {
		t.Errorf("base_url forwarded")
	}
	if auth != "Bearer sk-secret" {
		t.Errorf("upstream Authorization %q", auth)
	}
	// An upstream error keeps its status and message, with the key masked.
	resp, eb := post(t, srv.URL+"/api/v1/completions", `{"prompt":"fail"}`, nil)
	if resp.StatusCode != 400 || eb.Error.Code != CodeUpstreamError || !strings.Contains(eb.Error.Message, "prompt rejected") {
		t.Errorf("upstream error relayed as %d %+v", resp.StatusCode, eb.Error)
	}
	r, err := http.Get(srv.URL + "/api/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(raw), `"fake"`) {
		t.Errorf("models: %d %s", r.StatusCode, raw)
	}
	for _, path := range []string{"/api/info"} {
		r, err = http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ = io.ReadAll(r.Body)
		r.Body.Close()
		var in Info
		if err := json.Unmarshal(raw, &in); err != nil || in.Proxy != "servelab" || in.MaxTokens != 64 || in.MaxBodyBytes != 1024 ||
			!strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %s (%v)", path, raw, err)
		}
		if strings.Contains(string(raw), "127.0.0.1") || strings.Contains(string(raw), "sk-secret") {
			t.Errorf("%s leaks configuration: %s", path, raw)
		}
	}
}

func TestUnreachableLab(t *testing.T) {
	lab := newFakeLab(t, 0)
	srv := newTestProxy(t, lab, nil)
	lab.Close()
	resp, eb := post(t, srv.URL+"/api/v1/completions", `{"prompt":"x"}`, nil)
	if resp.StatusCode != 502 || eb.Error.Code != CodeUpstreamDown {
		t.Errorf("got %d %+v", resp.StatusCode, eb.Error)
	}
}

func TestBurstBeyondRateLimit(t *testing.T) {
	lab := newFakeLab(t, 0)
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	srv := newTestProxy(t, lab, func(c *Config) {
		c.Limiter = NewLimiter(60, 3, NewMemoryStore(100))
		c.ClientKey = HeaderKey("X-Client")
		c.Now = clock
	})
	api := srv.URL + "/api/v1/completions"
	for i := 0; i < 3; i++ {
		if resp, _ := post(t, api, `{"prompt":"x"}`, map[string]string{"X-Client": "10.0.0.1"}); resp.StatusCode != 200 {
			t.Fatalf("request %d within the burst: %d", i, resp.StatusCode)
		}
	}
	resp, eb := post(t, api, `{"prompt":"x"}`, map[string]string{"X-Client": "10.0.0.1"})
	if resp.StatusCode != 429 || eb.Error.Code != CodeRateLimited || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("beyond the burst: %d %+v Retry-After %q", resp.StatusCode, eb.Error, resp.Header.Get("Retry-After"))
	}
	if n := lab.hits.Load(); n != 3 {
		t.Fatalf("lab saw %d requests, want the 3 allowed", n)
	}
	// Another client has its own bucket; the first gets a token back after a second.
	if resp, _ := post(t, api, `{"prompt":"x"}`, map[string]string{"X-Client": "10.0.0.2"}); resp.StatusCode != 200 {
		t.Fatalf("other client: %d", resp.StatusCode)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if resp, _ := post(t, api, `{"prompt":"x"}`, map[string]string{"X-Client": "10.0.0.1"}); resp.StatusCode != 200 {
		t.Fatalf("after refill: %d", resp.StatusCode)
	}
}

func TestNewRefusesBadUpstreams(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "http://", "http://user:pw@lab", "http://lab/?a=b", "lab:8000"} {
		if _, err := New(Config{Upstream: u, Client: NoRedirectClient()}); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
	u, err := NormalizeUpstream("HTTP://Lab.Example:8000/llm/v1/")
	if err != nil || u.String() != "http://lab.example:8000/llm" {
		t.Errorf("normalized %v, %v", u, err)
	}
}

// labBodies are the bodies the lab's own clients send: run.py
// (cmd/servelab/testdata/run.py, completions and chat), servelab measure
// (cmd/internal/labclient, with stream_options) and the page's edge live
// mode (wasm/play/edge.go).
var labBodies = []struct {
	name string
	chat bool
	body string
}{
	{"run.py completions", false, `{"model": "m", "prompt": "1 2 3", "max_tokens": 16, "temperature": 0.0, "stream": true, "ignore_eos": true}`},
	{"run.py chat", true, `{"model": "m", "messages": [{"role": "user", "content": "1 2 3"}], "max_tokens": 16, "temperature": 0.0, "stream": true, "ignore_eos": false}`},
	{"measure completions", false, `{"ignore_eos":true,"max_tokens":16,"model":"","prompt":"1 2 3","stream":true,"stream_options":{"continuous_usage_stats":true,"include_usage":true},"temperature":0}`},
	{"measure chat", true, `{"ignore_eos":true,"max_tokens":16,"messages":[{"content":"1 2 3","role":"user"}],"model":"m","stream":true,"stream_options":{"continuous_usage_stats":true,"include_usage":true},"temperature":0}`},
	{"edge live mode", false, `{"ignore_eos":true,"max_tokens":16,"model":"m","prompt":"4 5 6","stream":true,"stream_options":{"continuous_usage_stats":true,"include_usage":true},"temperature":0}`},
	{"chat max_completion_tokens, n 1", true, `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"max_completion_tokens":8,"n":1}`},
}

func TestOnePromptAndOnlyTheLabsFields(t *testing.T) {
	up, _ := NormalizeUpstream("http://lab.example/v1")
	for _, c := range labBodies {
		out, e := ValidateCompletion([]byte(c.body), 64, c.chat, up)
		if e != nil {
			t.Errorf("%s: refused: %s", c.name, e.Msg)
			continue
		}
		var in, got map[string]any
		json.Unmarshal([]byte(c.body), &in)
		json.Unmarshal(out, &got)
		for k, v := range in {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("%s: %s forwarded as %v, sent %v", c.name, k, got[k], v)
			}
		}
	}
	// A batch (one choice per prompt upstream) and every field the lab does
	// not send are refused, and the message names what was wrong.
	for _, c := range []struct {
		name string
		chat bool
		body string
		says string
	}{
		{"a list of prompts", false, `{"prompt":["a","b","c"],"max_tokens":4}`, `"prompt"`},
		{"a list of token-id lists", false, `{"prompt":[[1,2],[3,4]],"max_tokens":4}`, `"prompt"`},
		{"a list of one prompt", false, `{"prompt":["a"],"max_tokens":4}`, `"prompt"`},
		{"token ids", false, `{"prompt":[1,2,3],"max_tokens":4}`, `"prompt"`},
		{"a number", false, `{"prompt":7}`, `"prompt"`},
		{"null prompt", false, `{"prompt":null}`, `"prompt"`},
		{"use_beam_search", false, `{"prompt":"x","use_beam_search":true}`, `"use_beam_search"`},
		{"guided_regex", false, `{"prompt":"x","guided_regex":"(a|aa)*b"}`, `"guided_regex"`},
		{"min_tokens", false, `{"prompt":"x","min_tokens":4}`, `"min_tokens"`},
		{"several unknown, all named", false, `{"prompt":"x","echo":true,"logprobs":5,"suffix":"y"}`, `"echo", "logprobs", "suffix"`},
		{"chat: a tool list", true, `{"messages":[{"role":"user","content":"x"}],"tools":[]}`, `"tools"`},
		{"chat: content parts (an image URL fetched upstream)", true, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://169.254.169.254/"}}]}]}`, `"content"`},
		{"chat: a message field", true, `{"messages":[{"role":"user","content":"x","name":"n"}]}`, `"name"`},
		{"chat: messages not a list", true, `{"messages":{"role":"user","content":"x"}}`, `"messages"`},
		{"chat: a prompt too", true, `{"messages":[{"role":"user","content":"x"}],"prompt":["a","b"]}`, `"prompt"`},
		{"completions: messages too", false, `{"prompt":"x","messages":[]}`, `"messages"`},
		{"stream_options: another option", false, `{"prompt":"x","stream_options":{"include_usage":true,"chunk_size":1}}`, `"chunk_size"`},
		{"stream_options: not a bool", false, `{"prompt":"x","stream_options":{"include_usage":"yes"}}`, `"include_usage"`},
		{"temperature: a string", false, `{"prompt":"x","temperature":"hot"}`, `"temperature"`},
		{"ignore_eos: a number", false, `{"prompt":"x","ignore_eos":1}`, `"ignore_eos"`},
		{"model: an object", false, `{"prompt":"x","model":{"id":"m"}}`, `"model"`},
	} {
		_, e := ValidateCompletion([]byte(c.body), 64, c.chat, up)
		if e == nil {
			t.Errorf("%s: %s passed", c.name, c.body)
			continue
		}
		if e.Status != 400 || e.Code != CodeInvalidRequest || !strings.Contains(e.Msg, c.says) {
			t.Errorf("%s: %d %s %q, want 400 %s naming %s", c.name, e.Status, e.Code, e.Msg, CodeInvalidRequest, c.says)
		}
	}
}

func TestBatchNeverReachesTheLab(t *testing.T) {
	lab := newFakeLab(t, 0)
	srv := newTestProxy(t, lab, nil)
	batch := `{"prompt":[` + strings.TrimSuffix(strings.Repeat(`"a",`, 100), ",") + `],"max_tokens":64,"stream":true}`
	resp, eb := post(t, srv.URL+"/api/v1/completions", batch, nil)
	if resp.StatusCode != 400 || eb.Error.Code != CodeInvalidRequest || !strings.Contains(eb.Error.Message, "prompt") {
		t.Errorf("a batch of 100 prompts: %d %+v", resp.StatusCode, eb.Error)
	}
	if n := lab.hits.Load(); n != 0 {
		t.Errorf("the batch reached the lab server (%d requests)", n)
	}
}
