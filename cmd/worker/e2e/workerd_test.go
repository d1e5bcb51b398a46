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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"servelab/cmd/internal/labserver"
	"servelab/sim"
)

// The worker's limits in this test: small, so that the guard rails are
// reached quickly.
const (
	testMaxTokens = 32
	testMaxBody   = 4096
	testPerMinute = 60 // one token back a second
	testBurst     = 4
)

// limits are a worker's guard-rail settings.
type limits struct{ maxTokens, maxBody, perMinute, burst int }

// testLimits are the small ones above.
var testLimits = limits{testMaxTokens, testMaxBody, testPerMinute, testBurst}

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
	t.Fatalf("workerd not found: run `make deps` (npm ci --prefix cmd/worker) or set WORKERD")
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
		if stale(src, e.Name()) {
			t.Logf("left out site/%s: empty or older than the file it compresses (a build in progress?)", e.Name())
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

// stale reports whether name is a compressed variant (.br, .gz) that is
// empty or older than the file it compresses.
func stale(dir, name string) bool {
	base := strings.TrimSuffix(strings.TrimSuffix(name, ".br"), ".gz")
	if base == name {
		return false
	}
	v, err1 := os.Stat(filepath.Join(dir, name))
	b, err2 := os.Stat(filepath.Join(dir, base))
	return err1 != nil || err2 != nil || v.Size() == 0 || v.ModTime().Before(b.ModTime())
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

// buildWorker runs the same builder as `make worker`, with this test's lab
// server and limits in its workerd.capnp, and checks the size it reports
// against the Workers limit.
func buildWorker(t *testing.T, root, site, labURL string, lim limits) string {
	out := filepath.Join(t.TempDir(), "worker")
	log := goCmd(t, root, nil, "run", "./cmd/worker/bundle", "-o", out, "-site", site,
		"-lab", labURL, "-api-key", "sk-e2e-secret", "-max-tokens", fmt.Sprint(lim.maxTokens),
		"-max-body", fmt.Sprint(lim.maxBody), "-per-minute", fmt.Sprint(lim.perMinute), "-burst", fmt.Sprint(lim.burst))
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

// startWorkerd runs workerd on the bundle's workerd.capnp in its own process
// group, on a listener this test opened (so no port race), and stops the
// whole group at cleanup.
func startWorkerd(t *testing.T, workerd, dir string) string {
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
	cmd := exec.Command(workerd, "serve", "workerd.capnp", "--socket-fd", "http=3")
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

// lab is the worker's upstream on loopback: servelab's own lab server
// (cmd/internal/labserver, in its metronome mode so that token times are
// exact), behind a recorder of every request that reaches it. Requests with
// the prompt "lockstep" go instead to a stream that sends each token only
// when the test releases it, so the test can tell streaming from buffering
// without relying on timing.
type lab struct {
	real    http.Handler
	release chan struct{}
	gone    chan struct{} // a lockstep stream's client went away
	mu      sync.Mutex
	prompts []string
	auth    []string
	// When the lab server wrote each frame of each response to a prompt
	// under longWords words, and the first frame to a longer one.
	sent      [][]time.Time
	longFirst time.Time
	server    *labserver.Server
}

// longWords: a prompt this long or longer is a long prompt, whose own
// frames are not inter-token gaps of the short streams.
const longWords = 1000

// sendTimes records when the lab server wrote each of a response's frames
// (one Write each), for the gaps it sent as against those a client measured.
type sendTimes struct {
	http.ResponseWriter
	at []time.Time
}

func (w *sendTimes) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.at = append(w.at, time.Now())
	return n, err
}

// sentStall returns the longest gap the lab server left between two frames of
// one short stream around the long prompt's first frame (its prefill step's
// end), how long after that first frame the gap ended, and the median of all
// the short streams' gaps.
func (l *lab) sentStall() (stall, endAfterLong, median time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var gaps []time.Duration
	for _, at := range l.sent {
		for i := 1; i < len(at); i++ {
			g := at[i].Sub(at[i-1])
			gaps = append(gaps, g)
			if at[i-1].Before(l.longFirst) && at[i].After(l.longFirst) && g > stall {
				stall, endAfterLong = g, at[i].Sub(l.longFirst)
			}
		}
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		median = gaps[len(gaps)/2]
	}
	return stall, endAfterLong, median
}

// Unwrap lets the lab server's http.ResponseController flush and set deadlines.
func (w *sendTimes) Unwrap() http.ResponseWriter { return w.ResponseWriter }

const labCadence = 80 * time.Millisecond

func newLab(t *testing.T) *lab {
	ls, err := labserver.New(labserver.Config{Cadence: labCadence, APIKey: "sk-e2e-secret", ModelName: "e2e-model"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ls.Close)
	return &lab{real: ls.Handler(), release: make(chan struct{}), gone: make(chan struct{}, 10)}
}

func (l *lab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(b))
	var body struct {
		Prompt    string `json:"prompt"`
		MaxTokens int    `json:"max_tokens"`
	}
	json.Unmarshal(b, &body)
	l.mu.Lock()
	l.prompts = append(l.prompts, body.Prompt)
	l.auth = append(l.auth, r.Header.Get("Authorization"))
	l.mu.Unlock()
	if body.Prompt != "lockstep" {
		sent := &sendTimes{ResponseWriter: w}
		l.real.ServeHTTP(sent, r) // returns after the last frame
		l.mu.Lock()
		if len(strings.Fields(body.Prompt)) < longWords {
			l.sent = append(l.sent, sent.at)
		} else if len(sent.at) > 0 && l.longFirst.IsZero() {
			l.longFirst = sent.at[0]
		}
		l.mu.Unlock()
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
	for i := 0; i < body.MaxTokens; i++ {
		select {
		case <-l.release:
		case <-r.Context().Done():
			l.gone <- struct{}{}
			return
		case <-time.After(20 * time.Second):
			return
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\" t%d\"}]}\n\n", i)
		w.(http.Flusher).Flush()
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

func (l *lab) seen(prompt string) int {
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
var client = &http.Client{Transport: &http.Transport{DisableCompression: true, Proxy: nil}, Timeout: time.Minute}

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

// newSimLab is a lab server driven by the simulated engine (Llama on an
// H100, prefill-first, no memory limits), so a long prompt stalls every
// stream as on a real GPU, and the stall the simulator predicts is known.
// It runs scale times slower than the simulated GPU (1: as fast).
func newSimLab(t *testing.T, scale float64) (*lab, sim.Config) {
	step, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := sim.NewPolicy("prefill-first", 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Step: step, Policy: pol}
	ls, err := labserver.New(labserver.Config{Engine: cfg, APIKey: "sk-e2e-secret", ModelName: "e2e-model", TimeScale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ls.Close)
	return &lab{real: ls.Handler(), release: make(chan struct{}), gone: make(chan struct{}, 10), server: ls}, cfg
}

// startStack builds the worker on the staged site, starts the lab server
// and workerd, and returns the worker's URL, the lab, its URL and the site.
func startStack(t *testing.T) (base string, l *lab, labURL, site string) {
	root := repoRoot(t)
	workerd := findWorkerd(t, root)
	site = stageSite(t, root)
	l = newLab(t)
	labURL = serveLab(t, l)
	dir := buildWorker(t, root, site, labURL+"/v1", testLimits)
	return startWorkerd(t, workerd, dir), l, labURL, site
}

func TestWorkerInWorkerd(t *testing.T) {
	if testing.Short() {
		t.Log("runs workerd; -short runs it all the same (it is what CI checks)")
	}
	base, lab, labURL, site := startStack(t)

	t.Run("page", func(t *testing.T) {
		// "/" is index.html; every other file of the site but the wasm (next) is served as it is.
		paths := map[string]string{"/": "index.html"}
		entries, _ := os.ReadDir(site)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "app.wasm") {
				paths["/"+e.Name()] = e.Name()
			}
		}
		for path, name := range paths {
			want, _ := os.ReadFile(filepath.Join(site, name))
			resp, err := client.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") == "" || !bytes.Equal(got, want) {
				t.Errorf("GET %s = %d %q, %d bytes; want site/%s (%d bytes)", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(got), name, len(want))
			}
		}
		resp, err := client.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET / has type %q", resp.Header.Get("Content-Type"))
		}
		// Nothing but the site's files: no sources, no way out of the directory.
		for _, path := range []string{"/site.go", "/notthere.html", "/..%2f..%2fetc%2fpasswd", "/%2e%2e/%2e%2e/etc/hostname.txt", "//etc/passwd.txt", "/.hidden.txt"} {
			resp, err := client.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("GET %s = %d %q %.80s, want a JSON 404", path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
		}
		// The page's probe for a companion gets a "no" (not a 404, an error in the console).
		if resp, err := client.Get(base + "/api/health"); err != nil {
			t.Fatal(err)
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), `"ok": false`) {
				t.Errorf("GET /api/health = %d %.80s, want 200 with \"ok\": false", resp.StatusCode, b)
			}
		}
		// Worker overhead: each request starts a fresh Go instance.
		var lat []time.Duration
		for i := 0; i < 10; i++ {
			start := time.Now()
			resp, err := client.Get(base + "/api/info")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lat = append(lat, time.Since(start))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		t.Logf("GET /api/info through the Go worker: median %v, max %v over %d", lat[len(lat)/2].Round(100*time.Microsecond), lat[len(lat)-1].Round(100*time.Microsecond), len(lat))
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
		req, _ := http.NewRequest("HEAD", base+"/app.wasm", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		gz, _ := os.Stat(filepath.Join(site, "app.wasm.gz"))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") == "gzip" && gz != nil && resp.ContentLength != gz.Size() {
			t.Errorf("HEAD /app.wasm: %d, Content-Length %d", resp.StatusCode, resp.ContentLength)
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

	t.Run("a client that leaves ends the upstream stream", func(t *testing.T) {
		// Otherwise every closed tab would keep a stream open on the lab server.
		req, _ := http.NewRequest("POST", base+"/api/v1/completions", strings.NewReader(`{"prompt":"lockstep","max_tokens":5,"stream":true}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("CF-Connecting-IP", "198.51.100.3")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		lab.release <- struct{}{}
		rd := bufio.NewReader(resp.Body)
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended before its first token: %v", err)
			}
			if strings.HasPrefix(line, "data:") {
				break
			}
		}
		resp.Body.Close() // the client leaves after one token
		client.CloseIdleConnections()
		left := time.Now()
		select {
		case <-lab.gone:
			t.Logf("the lab server saw the client leave %v later", time.Since(left).Round(time.Millisecond))
		case lab.release <- struct{}{}:
			// The worker still asked for another token; it must stop soon.
			select {
			case <-lab.gone:
				t.Logf("the lab server saw the client leave %v later (after one more token)", time.Since(left).Round(time.Millisecond))
			case <-time.After(10 * time.Second):
				t.Fatalf("the upstream stream is still open 10s after its client left")
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the upstream stream is still open 10s after its client left")
		}
	})

	t.Run("lab server stream keeps its pace", func(t *testing.T) {
		// The lab server sends a token every labCadence: arrival times at the
		// client, through workerd, must keep that pace, not bunch up.
		const n = 10
		req, _ := http.NewRequest("POST", base+"/api/v1/completions",
			strings.NewReader(fmt.Sprintf(`{"model":"e2e-model","prompt":"one two three","max_tokens":%d,"stream":true,"ignore_eos":true}`, n)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("CF-Connecting-IP", "198.51.100.2")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		rd := bufio.NewReader(resp.Body)
		var at []time.Duration
		var text strings.Builder
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				break
			}
			if !strings.HasPrefix(line, "data: {") {
				continue
			}
			var f struct {
				Choices []struct{ Text string }
			}
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &f) != nil {
				t.Fatalf("a broken frame came through: %q", line)
			}
			if len(f.Choices) > 0 && f.Choices[0].Text != "" {
				at = append(at, time.Since(start))
				text.WriteString(f.Choices[0].Text)
			}
		}
		if len(at) != n {
			t.Fatalf("%d token frames, want %d", len(at), n)
		}
		var gaps []time.Duration
		for i := 1; i < n; i++ {
			gaps = append(gaps, (at[i] - at[i-1]).Round(100*time.Microsecond))
		}
		sorted := append([]time.Duration(nil), gaps...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		median := sorted[len(sorted)/2]
		t.Logf("first token after %v; gaps between frames at the client %v (median %v, lab cadence %v)", at[0].Round(time.Millisecond), gaps, median, labCadence)
		if median < labCadence/2 || median > labCadence*2 {
			t.Fatalf("median gap %v, want about the lab's %v: frames are not relayed as they come", median, labCadence)
		}
		if span := at[n-1] - at[0]; span < time.Duration(n-1)*labCadence*6/10 {
			t.Fatalf("frames 1..%d arrived within %v: bunched, not streamed", n, span)
		}
	})

	t.Run("models", func(t *testing.T) {
		resp, err := client.Get(base + "/api/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"e2e-model"`)) {
			t.Fatalf("GET /api/v1/models: %d %s", resp.StatusCode, b)
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
		// A page of this site may call the API; another site's page may not.
		for _, c := range []struct {
			origin string
			status int
		}{{base, 200}, {"https://evil.example", 403}} {
			req, _ := http.NewRequest("POST", api, strings.NewReader(`{"prompt":"from a page","max_tokens":1}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("CF-Connecting-IP", "198.51.100.30")
			req.Header.Set("Origin", c.origin)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Errorf("Origin %s: %d %s, want %d", c.origin, resp.StatusCode, b, c.status)
			}
		}
		if n := lab.seen("from a page"); n != 1 {
			t.Errorf("the lab server saw %d requests from pages, want the 1 from this site", n)
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

	t.Run("page embeddable from any origin", func(t *testing.T) {
		// "Embed this view": a slide deck from disk (Origin "null" where one is
		// sent) or from another site puts the page in an iframe; the page and its
		// assets load, and nothing in the answer forbids framing.
		for _, c := range []struct{ path, origin, dest string }{
			{"/?embed=1&chapter=demo4", "", "iframe"},
			{"/index.html?embed=1&chapter=demo3", "null", "iframe"},
			{"/app.js", "https://slides.example.org", "script"},
			{"/style.css", "null", "style"},
		} {
			req, _ := http.NewRequest("GET", base+c.path, nil)
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			req.Header.Set("Sec-Fetch-Dest", c.dest)
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || len(b) == 0 {
				t.Errorf("GET %s from %q (%s): %d %.120s, want the site's file", c.path, c.origin, c.dest, resp.StatusCode, b)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			if xfo := resp.Header.Get("X-Frame-Options"); xfo != "" || strings.Contains(csp, "frame-ancestors") {
				t.Errorf("GET %s forbids framing: X-Frame-Options %q, Content-Security-Policy %q", c.path, xfo, csp)
			}
		}
		// The API keeps refusing those callers.
		req, _ := http.NewRequest("POST", base+"/api/v1/completions", strings.NewReader(`{"prompt":"from a deck","max_tokens":1}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("CF-Connecting-IP", "198.51.100.31")
		req.Header.Set("Origin", "null")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 || lab.seen("from a deck") != 0 {
			t.Errorf("POST /api/v1/completions from Origin null: %d %s, want 403 before the lab server", resp.StatusCode, b)
		}
	})

	t.Run("rate limit holds across requests", func(t *testing.T) {
		// Each request runs in a fresh Go instance: only state kept outside Go
		// (edge.mjs's module scope) can count a burst. A token comes back every
		// per; on a busy machine the requests themselves can take that long, so
		// what gets through is counted against what the rate allows for the
		// time the requests took, from the first one's sending to the last
		// one's answer (the limiter's own times lie within).
		const ip = "2001:db8:42::1"
		per := time.Minute / testPerMinute
		var lat []time.Duration
		first, through := time.Now(), 0
		for {
			// After the burst, another address in the same /64: the same client.
			addr := ip
			if through >= testBurst {
				addr = "2001:db8:42::2"
			}
			start := time.Now()
			resp, b := post(t, base+"/api/v1/completions", addr, `{"prompt":"burst","max_tokens":1,"ignore_eos":true}`)
			lat = append(lat, time.Since(start))
			if resp.StatusCode == 429 {
				if through < testBurst {
					t.Fatalf("request %d of a burst of %d refused: %s", through+1, testBurst, b)
				}
				if resp.Header.Get("Retry-After") == "" || !bytes.Contains(b, []byte(`"rate_limited"`)) {
					t.Fatalf("request beyond the burst: 429 with Retry-After %q %s", resp.Header.Get("Retry-After"), b)
				}
				break
			}
			if resp.StatusCode != 200 {
				t.Fatalf("request %d: %d %s", through+1, resp.StatusCode, b)
			}
			through++
			if allowed := testBurst + int(time.Since(first)/per); through > allowed {
				t.Fatalf("%d requests got through in %v: a burst of %d and %d a minute allow %d", through, time.Since(first), testBurst, testPerMinute, allowed)
			}
		}
		t.Logf("non-streaming request through workerd: %v (%d got through before the refusal)", lat, through)
		if n := lab.seen("burst"); n != through {
			t.Fatalf("the lab server saw %d requests of the burst, %d got through", n, through)
		}
		// Another client is not affected.
		if resp, b := post(t, base+"/api/v1/completions", "198.51.100.99", `{"prompt":"other","max_tokens":1}`); resp.StatusCode != 200 {
			t.Fatalf("another client: %d %s", resp.StatusCode, b)
		}
		// Asking again and again, the client gets through once a token is
		// back (within per), and then, until another per has passed, not again.
		refused := time.Now()
		lastRefused := refused // when the last refused request was sent
		for {
			sent := time.Now()
			resp, b := post(t, base+"/api/v1/completions", ip, `{"prompt":"refill","max_tokens":1}`)
			if resp.StatusCode == 200 {
				break
			}
			if resp.StatusCode != 429 {
				t.Fatalf("waiting for a token: %d %s", resp.StatusCode, b)
			}
			lastRefused = sent
			if time.Since(refused) > 2*per {
				t.Fatalf("no token back %v after the refusal, at %d a minute", time.Since(refused), testPerMinute)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("a token came back %v after the refusal (one per %v)", time.Since(refused).Round(time.Millisecond), per)
		// At most one token came back between the last refusal and this
		// request's answer, if that took less than per: it was the one used.
		resp, _ := post(t, base+"/api/v1/completions", ip, `{"prompt":"refill","max_tokens":1}`)
		window := time.Since(lastRefused)
		switch {
		case resp.StatusCode == 429:
		case window < per:
			t.Fatalf("the refill gave more than one token within %v: %d", window, resp.StatusCode)
		default:
			t.Logf("a second token may be back: %v since the last refusal", window)
		}
		want := 1
		if resp.StatusCode == 200 {
			want = 2
		}
		if n := lab.seen("refill"); n != want {
			t.Fatalf("the lab server saw %d of the polling requests, want the %d allowed", n, want)
		}
	})
}
