//go:build unix

// Package e2e runs the Cloudflare Worker locally in workerd, the runtime
// Workers run on: it builds the worker as `make worker` does, serves the
// site's page and app.wasm from it, and streams completions through its
// proxy from a lab server on loopback.
package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The worker's limits in this test: small, so that the guard rails are
// reached quickly.
const (
	testMaxTokens = 32
	testMaxBody   = 4096
	testPerMinute = 120 // one token back every 0.5 s
	testBurst     = 4
)

// repoRoot is the module root, two directories up from this package.
func repoRoot(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", "..", ".."))
}

// findWorkerd finds the workerd binary: $WORKERD, else the npm package that
// .ci/run installs into cmd/worker/node_modules. Missing, it fails the test
// with the command that installs it: CI installs it, so a skip would hide
// a broken set-up.
func findWorkerd(t *testing.T, root string) string {
	if p := os.Getenv("WORKERD"); p != "" {
		return p
	}
	nm := filepath.Join(root, "cmd", "worker", "node_modules")
	// The platform package holds the binary itself; .bin/workerd is a node
	// wrapper around it (also fine, the process group covers both).
	if m, _ := filepath.Glob(filepath.Join(nm, "@cloudflare", "workerd-*", "bin", "workerd")); len(m) > 0 {
		return m[0]
	}
	if p := filepath.Join(nm, ".bin", "workerd"); fileExists(p) {
		return p
	}
	t.Fatalf("workerd not found: run `npm install --prefix cmd/worker` (as .ci/run does) or set WORKERD")
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// stageSite copies the site's files for the worker's assets. A checkout
// where `make wasm` has not run has no app.wasm: the test then builds it (and
// wasm_exec.js from GOROOT) itself, so the page and wasm served are always
// the real ones.
func stageSite(t *testing.T, root string) string {
	src := filepath.Join(root, "site")
	dst := filepath.Join(t.TempDir(), "site")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if !fileExists(filepath.Join(src, "index.html")) {
		// Only until the playground's site lands: a page and a tiny module.
		t.Logf("site/index.html is not there yet: serving a placeholder page and wasm")
		os.WriteFile(filepath.Join(dst, "index.html"), []byte("<!doctype html><title>placeholder</title>\n"), 0o644)
		os.WriteFile(filepath.Join(dst, "app.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644)
		return dst
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !fileExists(filepath.Join(dst, "app.wasm")) {
		t.Logf("site/app.wasm not built: building ./wasm for this test")
		goCmd(t, root, []string{"GOOS=js", "GOARCH=wasm"}, "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dst, "app.wasm"), "./wasm")
		for _, suffix := range []string{".br", ".gz"} {
			os.Remove(filepath.Join(dst, "app.wasm"+suffix)) // stale next to a fresh build
		}
	}
	if !fileExists(filepath.Join(dst, "wasm_exec.js")) {
		b, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "lib", "wasm", "wasm_exec.js"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dst, "wasm_exec.js"), b, 0o644)
	}
	return dst
}

func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	c := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), args...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// buildWorker runs the same builder as `make worker` and checks the size it
// reports against the Workers limit.
func buildWorker(t *testing.T, root, site string) string {
	out := filepath.Join(t.TempDir(), "worker")
	log := goCmd(t, root, nil, "run", "./cmd/worker/bundle", "-o", out, "-site", site)
	t.Logf("make worker says:\n%s", log)
	m := regexp.MustCompile(`(\d+) bytes, (\d+) bytes gzip -9 \(limit (\d+)\)`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("the builder did not report the script size")
	}
	gz, _ := strconv.Atoi(m[2])
	if gz <= 0 || gz > 3_000_000 {
		t.Fatalf("worker script is %d bytes gzipped, over the 3 MB Workers limit", gz)
	}
	return out
}

// configCapnp is workerd's configuration: the worker with its settings as
// text bindings, the staged site as a disk service bound as ASSETS (what
// wrangler's assets directory is on Cloudflare), and a network service that
// lets fetch reach loopback, where the lab server listens.
const configCapnp = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .edge),
    (name = "assets", disk = (path = %q)),
    (name = "net", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", http = (), service = "main")],
);

const edge :Workerd.Worker = (
  modules = [
    (name = "edge.mjs", esModule = embed "script/edge.mjs"),
    (name = "worker.mjs", esModule = embed "script/worker.mjs"),
    (name = "runtime.mjs", esModule = embed "script/runtime.mjs"),
    (name = "wasm_exec.js", esModule = embed "script/wasm_exec.js"),
    (name = "app.wasm", wasm = embed "script/app.wasm"),
  ],
  compatibilityDate = "2025-01-01",
  bindings = [
    (name = "LAB_SERVER_URL", text = %q),
    (name = "LAB_API_KEY", text = "sk-e2e-secret"),
    (name = "MAX_TOKENS", text = "%d"),
    (name = "MAX_BODY_BYTES", text = "%d"),
    (name = "RATE_LIMIT_PER_MINUTE", text = "%d"),
    (name = "RATE_LIMIT_BURST", text = "%d"),
    (name = "ASSETS", service = "assets"),
  ],
  globalOutbound = "net",
);
`

// startWorkerd runs workerd in its own process group on a listener this
// test opened (so no port race), and stops the whole group at cleanup.
func startWorkerd(t *testing.T, workerd, dir, labURL string) string {
	cfg := fmt.Sprintf(configCapnp, filepath.Join(dir, "assets"), labURL, testMaxTokens, testMaxBody, testPerMinute, testBurst)
	if err := os.WriteFile(filepath.Join(dir, "config.capnp"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the duplicate in lf stays open for workerd
	var logs bytes.Buffer
	var logMu sync.Mutex
	cmd := exec.Command(workerd, "serve", "config.capnp", "--socket-fd", "http=3")
	cmd.Dir = dir
	cmd.ExtraFiles = []*os.File{lf}
	w := lockedWriter{&logs, &logMu}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting workerd: %v", err)
	}
	lf.Close()
	pgid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
		}
		// Nothing of the group may outlive the test.
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(-pgid, 0) == nil {
			if time.Now().After(deadline) {
				syscall.Kill(-pgid, syscall.SIGKILL)
				t.Errorf("workerd's process group %d outlived SIGTERM", pgid)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("workerd output:\n%s", logs.String())
			logMu.Unlock()
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/api/info")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		select {
		case <-exited:
			t.Fatalf("workerd exited early:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("workerd did not answer /api/info within 30s (last: %v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// stubLab is a lab server whose streams send each token only when the test
// releases it, so the test can tell streaming from buffering exactly, and
// which records every request that reached it.
type stubLab struct {
	release chan struct{}
	mu      sync.Mutex
	prompts []string
	auth    []string
}

func (l *stubLab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Prompt    string `json:"prompt"`
		MaxTokens int    `json:"max_tokens"`
		Stream    bool   `json:"stream"`
	}
	json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body)
	l.mu.Lock()
	l.prompts = append(l.prompts, body.Prompt)
	l.auth = append(l.auth, r.Header.Get("Authorization"))
	l.mu.Unlock()
	if r.URL.Path != "/v1/completions" {
		http.Error(w, `{"error":{"message":"not here"}}`, 404)
		return
	}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"text":"ok"}],"usage":{"completion_tokens":%d}}`, body.MaxTokens)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
	for i := 0; i < body.MaxTokens; i++ {
		if body.Prompt == "lockstep" {
			select {
			case <-l.release:
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Second):
				return
			}
		} else {
			time.Sleep(100 * time.Millisecond)
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\" t%d\"}],\"usage\":{\"completion_tokens\":%d}}\n\n", i, i+1)
		w.(http.Flusher).Flush()
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

func (l *stubLab) seen(prompt string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, p := range l.prompts {
		if p == prompt {
			n++
		}
	}
	return n
}

func serveLab(t *testing.T, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// client talks to the worker without transparent decompression, so the
// test sees the bytes and encodings the worker sends.
var client = &http.Client{Transport: &http.Transport{DisableCompression: true, Proxy: nil}}

func post(t *testing.T, url, ip, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("CF-Connecting-IP", ip)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestWorkerInWorkerd(t *testing.T) {
	if testing.Short() {
		t.Log("runs workerd; -short runs it all the same (it is what CI checks)")
	}
	root := repoRoot(t)
	workerd := findWorkerd(t, root)
	site := stageSite(t, root)
	dir := buildWorker(t, root, site)
	lab := &stubLab{release: make(chan struct{})}
	labURL := serveLab(t, lab)
	base := startWorkerd(t, workerd, dir, labURL+"/v1")

	t.Run("page", func(t *testing.T) {
		want, _ := os.ReadFile(filepath.Join(site, "index.html"))
		resp, err := client.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !bytes.Equal(got, want) {
			t.Fatalf("GET / = %d %q, %d bytes; want site/index.html (%d bytes)", resp.StatusCode, resp.Header.Get("Content-Type"), len(got), len(want))
		}
	})

	t.Run("wasm", func(t *testing.T) {
		raw, _ := os.ReadFile(filepath.Join(site, "app.wasm"))
		for _, enc := range []string{"gzip", "br", "identity"} {
			req, _ := http.NewRequest("GET", base+"/app.wasm", nil)
			req.Header.Set("Accept-Encoding", enc)
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ce := resp.Header.Get("Content-Encoding")
			t.Logf("GET /app.wasm (Accept-Encoding %s): %d, %s, Content-Encoding %q, %d bytes in %v", enc, resp.StatusCode, resp.Header.Get("Content-Type"), ce, len(got), time.Since(start).Round(time.Millisecond))
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/wasm" {
				t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			switch ce {
			case "":
				if !bytes.Equal(got, raw) {
					t.Fatalf("the wasm served (%d bytes) is not site/app.wasm (%d bytes)", len(got), len(raw))
				}
			case "gzip":
				zr, err := gzip.NewReader(bytes.NewReader(got))
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil || !bytes.Equal(plain, raw) {
					t.Fatalf("gzip variant does not decode to site/app.wasm (%v)", err)
				}
			case "br":
				// No brotli decoder in the standard library: check it is the pre-compressed file, byte for byte.
				want, _ := os.ReadFile(filepath.Join(site, "app.wasm.br"))
				if enc != "br" || !bytes.Equal(got, want) {
					t.Fatalf("br variant is not site/app.wasm.br")
				}
			default:
				t.Fatalf("Content-Encoding %q for Accept-Encoding %q", ce, enc)
			}
			if ce != "" && ce != enc {
				t.Fatalf("sent %s to a client accepting only %s", ce, enc)
			}
		}
		if !bytes.HasPrefix(raw, []byte("\x00asm")) {
			t.Fatalf("site/app.wasm is not WebAssembly")
		}
	})

	t.Run("frames arrive one by one", func(t *testing.T) {
		const n = 6
		req, _ := http.NewRequest("POST", base+"/api/v1/completions",
			strings.NewReader(fmt.Sprintf(`{"model":"m","prompt":"lockstep","max_tokens":%d,"stream":true}`, n)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("CF-Connecting-IP", "198.51.100.1")
		// Headers must come before the lab server has produced any token.
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		frames := make(chan string)
		go func() {
			defer close(frames)
			rd := bufio.NewReader(resp.Body)
			for {
				line, err := rd.ReadString('\n')
				if err != nil {
					return
				}
				if strings.HasPrefix(line, "data:") {
					frames <- strings.TrimSpace(line)
				}
			}
		}()
		// The lab server sends token i only after token i-1 has reached this
		// client through workerd: any buffering on the way stalls the stream.
		var lags []time.Duration
		for i := 0; i < n; i++ {
			sent := time.Now()
			select {
			case lab.release <- struct{}{}:
			case <-time.After(10 * time.Second):
				t.Fatalf("the lab server never asked for token %d", i)
			}
			select {
			case f := <-frames:
				lags = append(lags, time.Since(sent))
				if !strings.Contains(f, fmt.Sprintf(`" t%d"`, i)) {
					t.Fatalf("frame %d = %s", i, f)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("frame %d did not come through before the next was released: the proxy buffers", i)
			}
		}
		if f := <-frames; f != "data: [DONE]" {
			t.Fatalf("last frame %q", f)
		}
		t.Logf("lab release -> frame at the client, through workerd: %v", lags)
		lab.mu.Lock()
		auth := lab.auth[len(lab.auth)-1]
		lab.mu.Unlock()
		if auth != "Bearer sk-e2e-secret" {
			t.Errorf("lab server got Authorization %q, want the configured key", auth)
		}
	})

	t.Run("timed stream", func(t *testing.T) {
		// A lab server that paces itself (100 ms a token): arrival times at
		// the client must keep that pace, not bunch up at the end.
		const n = 8
		req, _ := http.NewRequest("POST", base+"/api/v1/completions",
			strings.NewReader(fmt.Sprintf(`{"prompt":"paced","max_tokens":%d,"stream":true}`, n)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("CF-Connecting-IP", "198.51.100.2")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		rd := bufio.NewReader(resp.Body)
		var at []time.Duration
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				break
			}
			if strings.HasPrefix(line, "data: {") {
				at = append(at, time.Since(start))
			}
		}
		if len(at) != n {
			t.Fatalf("%d frames, want %d", len(at), n)
		}
		var gaps []time.Duration
		for i := 1; i < n; i++ {
			gaps = append(gaps, at[i]-at[i-1])
		}
		t.Logf("frame arrivals %v, gaps %v", at, gaps)
		if span := at[n-1] - at[0]; span < time.Duration(n-1)*100*time.Millisecond*6/10 {
			t.Fatalf("frames %d..%d arrived within %v: bunched, not streamed", 1, n, span)
		}
	})

	t.Run("guard rails", func(t *testing.T) {
		api := base + "/api/v1/completions"
		cases := []struct {
			name, url, body string
			status          int
			code            string
		}{
			{"other upstream in the body", api, `{"prompt":"evil-body","base_url":"http://203.0.113.9/v1"}`, 403, "upstream_not_allowed"},
			{"other upstream in the query", api + "?upstream=http://203.0.113.9", `{"prompt":"evil-query"}`, 403, "upstream_not_allowed"},
			{"oversize body", api, `{"prompt":"oversize ` + strings.Repeat("x", testMaxBody) + `"}`, 413, "body_too_large"},
			{"max_tokens over the limit", api, fmt.Sprintf(`{"prompt":"greedy","max_tokens":%d}`, testMaxTokens+1), 400, "max_tokens_too_large"},
			{"a route the lab server has but the proxy does not", base + "/api/v1/embeddings", `{"prompt":"embed"}`, 404, "not_found"},
		}
		for i, c := range cases {
			resp, b := post(t, c.url, fmt.Sprintf("198.51.100.%d", 10+i), c.body)
			var eb struct {
				Error struct{ Message, Code string }
			}
			json.Unmarshal(b, &eb)
			if resp.StatusCode != c.status || eb.Error.Code != c.code || eb.Error.Message == "" ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%s: %d %s, want %d %s", c.name, resp.StatusCode, b, c.status, c.code)
			}
			if bytes.Contains(b, []byte("sk-e2e-secret")) || bytes.Contains(b, []byte(strings.TrimPrefix(labURL, "http://"))) {
				t.Errorf("%s: the answer leaks the configuration: %s", c.name, b)
			}
		}
		for _, p := range []string{"evil-body", "evil-query", "greedy", "embed"} {
			if lab.seen(p) != 0 {
				t.Errorf("refused request %q reached the lab server", p)
			}
		}
		lab.mu.Lock()
		for _, p := range lab.prompts {
			if strings.HasPrefix(p, "oversize") {
				t.Errorf("the oversize request reached the lab server")
			}
		}
		lab.mu.Unlock()
	})

	t.Run("rate limit holds across requests", func(t *testing.T) {
		// Each request runs in a fresh Go instance: only state kept outside Go
		// (edge.mjs's module scope) can count a burst.
		const ip = "2001:db8:42::1"
		var lat []time.Duration
		for i := 0; i < testBurst; i++ {
			start := time.Now()
			resp, b := post(t, base+"/api/v1/completions", ip, `{"prompt":"burst","max_tokens":1}`)
			lat = append(lat, time.Since(start))
			if resp.StatusCode != 200 {
				t.Fatalf("request %d of a burst of %d: %d %s", i+1, testBurst, resp.StatusCode, b)
			}
		}
		t.Logf("non-streaming request through workerd: %v", lat)
		// Another address in the same /64 is the same client.
		resp, b := post(t, base+"/api/v1/completions", "2001:db8:42::2", `{"prompt":"burst","max_tokens":1}`)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !bytes.Contains(b, []byte(`"rate_limited"`)) {
			t.Fatalf("request beyond the burst: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
		if n := lab.seen("burst"); n != testBurst {
			t.Fatalf("the lab server saw %d requests of the burst, want %d", n, testBurst)
		}
		// Another client is not affected.
		if resp, b := post(t, base+"/api/v1/completions", "198.51.100.99", `{"prompt":"other","max_tokens":1}`); resp.StatusCode != 200 {
			t.Fatalf("another client: %d %s", resp.StatusCode, b)
		}
		// A token comes back after 60/testPerMinute s.
		time.Sleep(time.Minute/testPerMinute + 100*time.Millisecond)
		if resp, b := post(t, base+"/api/v1/completions", ip, `{"prompt":"burst","max_tokens":1}`); resp.StatusCode != 200 {
			t.Fatalf("after the refill interval: %d %s", resp.StatusCode, b)
		}
		if resp, _ := post(t, base+"/api/v1/completions", ip, `{"prompt":"burst","max_tokens":1}`); resp.StatusCode != 429 {
			t.Fatalf("the refill gave more than one token: %d", resp.StatusCode)
		}
	})
}
