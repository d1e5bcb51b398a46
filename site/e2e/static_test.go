package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"servelab/site"
)

// maxStaticBytes is the bound on what a plain static host sends for
// one visit, everything included (issue 14, part 4).
const maxStaticBytes = 4.5e6

// testHost serves site/ as one of three kinds of host, counting what each
// response carries (status line, headers and body); a test can replace a
// file (a new build) while it runs.
type testHost struct {
	url string
	srv *http.Server
	fs  *overlay

	mu   sync.Mutex
	sent map[string]int64 // bytes sent, by "METHOD path"
	bad  []string         // responses with a status of 400 or more
}

// The kinds of host.
const (
	// plainHost is Go's http.FileServer: no Content-Encoding ever, as
	// python3 -m http.server or a course's web server.
	plainHost = "plain static host"
	// gzHost sends *.gz files with Content-Encoding: gzip (as Apache's
	// AddEncoding does), so the browser unpacks them itself.
	gzHost = "static host sending .gz as Content-Encoding gzip"
	// compressingHost is site.Handler (servelab serve): it sends app.wasm
	// brotli-compressed itself.
	compressingHost = "site.Handler"
)

func newHost(t *testing.T, kind string) *testHost {
	t.Helper()
	for _, f := range []string{"app.wasm", "app.wasm.gz", "version.js", "wasm_exec.js", "index.html"} {
		if _, err := os.Stat(siteDir + "/" + f); err != nil {
			t.Fatalf("site/%s is missing: run `make wasm` first (%v)", f, err)
		}
	}
	h := &testHost{fs: &overlay{base: os.DirFS(siteDir), files: fstest.MapFS{}}, sent: map[string]int64{}}
	files := http.FileServer(http.FS(h.fs))
	if kind == compressingHost {
		files = site.Handler(h.fs)
	}
	gzEncoding := kind == gzHost
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gzEncoding && strings.HasSuffix(r.URL.Path, ".gz") {
			w.Header().Set("Content-Encoding", "gzip")
		}
		cw := &countingWriter{ResponseWriter: w, status: 200}
		files.ServeHTTP(cw, r)
		n := cw.body + int64(len(r.Proto)+len(http.StatusText(cw.status))+7)
		for k, vs := range w.Header() {
			for _, v := range vs {
				n += int64(len(k) + len(v) + 4)
			}
		}
		h.mu.Lock()
		h.sent[r.Method+" "+r.URL.Path] += n
		if cw.status >= 400 {
			h.bad = append(h.bad, fmt.Sprintf("%s %s: %d", r.Method, r.URL.Path, cw.status))
		}
		h.mu.Unlock()
	})}
	go h.srv.Serve(ln)
	t.Cleanup(func() { h.srv.Close() })
	h.url = "http://" + ln.Addr().String() + "/"
	return h
}

// total is what the host has sent so far, and the requests it answered.
func (h *testHost) total() (int64, map[string]int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var n int64
	by := map[string]int64{}
	for k, v := range h.sent {
		n += v
		by[k] = v
	}
	return n, by
}

// stop takes the host off the network: the listener and every connection close.
func (h *testHost) stop() { h.srv.Close() }

type countingWriter struct {
	http.ResponseWriter
	status int
	body   int64
}

func (c *countingWriter) WriteHeader(s int) { c.status = s; c.ResponseWriter.WriteHeader(s) }
func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.body += int64(n)
	return n, err
}

// overlay is site/ with some files replaced.
type overlay struct {
	base  fs.FS
	mu    sync.Mutex
	files fstest.MapFS
}

func (o *overlay) Open(name string) (fs.File, error) {
	o.mu.Lock()
	f, ok := o.files[name]
	o.mu.Unlock()
	if ok {
		return fstest.MapFS{name: f}.Open(name)
	}
	return o.base.Open(name)
}

func (o *overlay) set(name, data string) {
	o.mu.Lock()
	o.files[name] = &fstest.MapFile{Data: []byte(data), Mode: 0o644, ModTime: time.Now()}
	o.mu.Unlock()
}

// consoleErrors collects what the page's console shows as errors: console.error
// calls, uncaught exceptions, and the browser's own error entries (a failed
// resource load such as a 404, which is how a missing favicon shows).
type consoleErrors struct {
	mu   sync.Mutex
	errs []string
}

func (c *consoleErrors) listen(ev any) {
	var line string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		line = "console." + string(ev.Type) + ":"
		for _, a := range ev.Args {
			if len(a.Value) > 0 {
				line += " " + string(a.Value)
			} else {
				line += " " + a.Description
			}
		}
	case *runtime.EventExceptionThrown:
		line = "exception: " + ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			line += " " + ev.ExceptionDetails.Exception.Description
		}
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level != cdplog.EntryLevelError {
			return
		}
		line = fmt.Sprintf("%s error: %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
	case *network.EventResponseReceived:
		if ev.Response.Status < 400 {
			return
		}
		line = fmt.Sprintf("HTTP %d %s", ev.Response.Status, ev.Response.URL)
	default:
		return
	}
	c.mu.Lock()
	c.errs = append(c.errs, line)
	c.mu.Unlock()
}

func (c *consoleErrors) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errs...)
}

// settle waits until the page has drawn, probed for a companion and an edge
// proxy, and (where the browser allows) made itself available offline: the
// whole of a first visit.
func settle(t *testing.T, ctx context.Context) bool {
	t.Helper()
	waitFor(t, ctx, `window.servelab && servelab.ready && servelab.timings().drawnGen >= 1 && servelab.status().liveProbed`, "the app to draw and probe for live mode")
	off, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.servelabOffline`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("servelabOffline: %v", err)
	}
	return off
}

// drawn checks that the timeline canvas shows a picture, not a blank.
func drawn(t *testing.T, ctx context.Context) {
	t.Helper()
	waitFor(t, ctx, `window.servelab && servelab.ready && servelab.timings().drawnGen >= 1`, "the app to draw its first frame")
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#view")))
	if err != nil {
		t.Fatalf("screenshot the timeline: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if n := colours(img); n < 6 {
		t.Errorf("the timeline shows %d distinct colours; a drawn timeline has many", n)
	}
}

// progress is what load.js last reported.
func progress(t *testing.T, ctx context.Context) map[string]any {
	t.Helper()
	return eval[map[string]any](t, ctx, `(() => { let p; servelabProgress(q => { p = p || Object.assign({}, q); }); return p; })()`)
}

// TestStaticHostSendsCompressedWasm serves site/ from a host that adds no
// Content-Encoding: the page must fetch app.wasm.gz and unpack it itself
// (never the raw 28 MB app.wasm), stay within the bytes for the whole
// visit, draw, and leave nothing in the console. A host that sends the .gz
// with Content-Encoding: gzip must not have it unpacked twice.
func TestStaticHostSendsCompressedWasm(t *testing.T) {
	for _, kind := range []string{plainHost, gzHost} {
		t.Run(kind, func(t *testing.T) {
			host := newHost(t, kind)
			var console consoleErrors
			ctx := browser(t, chromedp.WithListener(console.listen))
			if err := chromedp.Do(ctx, chromedp.Navigate(host.url)); err != nil {
				t.Fatal(err)
			}
			offline := settle(t, ctx)
			drawn(t, ctx)
			total, by := host.total()
			t.Logf("the host sent %.2f MB in all (offline copy made: %v): %v", float64(total)/1e6, offline, by)
			if total > maxStaticBytes {
				t.Errorf("the host sent %.2f MB for one visit, want at most %.1f MB", float64(total)/1e6, maxStaticBytes/1e6)
			}
			if n := by["GET /app.wasm"]; n > 0 {
				t.Errorf("the page fetched the raw app.wasm (%d bytes) from a host that does not compress", n)
			}
			if by["GET /app.wasm.gz"] == 0 {
				t.Errorf("the page did not fetch app.wasm.gz")
			}
			if _, ok := by["GET /favicon.ico"]; ok {
				t.Errorf("the browser asked for /favicon.ico: the page names no icon")
			}
			if !offline {
				t.Errorf("the page did not make itself available offline (service worker and cached wasm)")
			}
			p := progress(t, ctx)
			if p["source"] != "app.wasm.gz" || p["done"] != true || p["loaded"] != p["total"] || p["total"].(float64) < 1e6 {
				t.Errorf("load progress %v, want app.wasm.gz loaded to its full size", p)
			}
			// What the browser counts agrees: the page and its frame.
			wire := eval[float64](t, ctx, `[window, document.getElementById("view").contentWindow].reduce((s, w) =>
				s + w.performance.getEntriesByType("resource").concat(w.performance.getEntriesByType("navigation")).reduce((a, e) => a + e.transferSize, 0), 0)`)
			t.Logf("the page and its frame count %.2f MB transferred", wire/1e6)
			if wire > maxStaticBytes {
				t.Errorf("the browser counts %.2f MB transferred, want at most %.1f MB", wire/1e6, maxStaticBytes/1e6)
			}
			if errs := console.get(); len(errs) > 0 {
				t.Errorf("the console shows errors on load from a static host:\n%s", strings.Join(errs, "\n"))
			}
			if host.bad != nil {
				t.Errorf("the host answered with errors: %v", host.bad)
			}
		})
	}
}

// TestCompressingHostKeepsFastPath: site.Handler (servelab serve) sends
// app.wasm brotli-compressed itself; the page takes that, not the .gz, and the
// console stays clean there too (no favicon 404, no probe errors).
func TestCompressingHostKeepsFastPath(t *testing.T) {
	var console consoleErrors
	ctx := browser(t, chromedp.WithListener(console.listen))
	host := newHost(t, compressingHost)
	if err := chromedp.Do(ctx, chromedp.Navigate(host.url)); err != nil {
		t.Fatal(err)
	}
	settle(t, ctx)
	drawn(t, ctx)
	if p := progress(t, ctx); p["source"] != "app.wasm (br)" || p["done"] != true {
		t.Errorf("load progress %v, want app.wasm sent with Content-Encoding br", p)
	}
	total, by := host.total()
	t.Logf("site.Handler sent %.2f MB in all: %v", float64(total)/1e6, by)
	if _, ok := by["GET /app.wasm.gz"]; ok {
		t.Errorf("the page fetched app.wasm.gz from a host that compresses app.wasm itself")
	}
	if n := by["GET /app.wasm"]; n == 0 || n > 3.5e6 {
		t.Errorf("app.wasm took %d bytes from site.Handler, want its brotli size", n)
	}
	if errs := console.get(); len(errs) > 0 {
		t.Errorf("the console shows errors on load from site.Handler:\n%s", strings.Join(errs, "\n"))
	}
}

// TestOfflineAfterOneVisit: after one visit a reload takes app.wasm from the
// cache; a new build replaces the old on the next reload (and its cache the
// old cache); with the host gone, a reload still draws the new build. On a
// plain static host and on site.Handler, whose app.wasm differ on the wire.
func TestOfflineAfterOneVisit(t *testing.T) {
	for _, kind := range []string{plainHost, compressingHost} {
		t.Run(kind, func(t *testing.T) { offlineAfterOneVisit(t, kind) })
	}
}

func offlineAfterOneVisit(t *testing.T, kind string) {
	host := newHost(t, kind)
	// How the service worker's routes took each request (by path).
	var mu sync.Mutex
	routed := map[string]string{}
	ctx := browser(t, chromedp.WithListener(func(ev any) {
		if ev, ok := ev.(*network.EventResponseReceived); ok && ev.Response.ServiceWorkerRouterInfo != nil {
			if u, err := url.Parse(ev.Response.URL); err == nil {
				mu.Lock()
				routed[u.Path] = string(ev.Response.ServiceWorkerRouterInfo.MatchedSourceType)
				mu.Unlock()
			}
		}
	}))
	if err := chromedp.Do(ctx, chromedp.Navigate(host.url+"?preset=demo2")); err != nil {
		t.Fatal(err)
	}
	if !settle(t, ctx) {
		t.Fatal("the first visit did not make the page available offline")
	}
	v1 := eval[string](t, ctx, `servelabBuild.version`)
	_, first := host.total()

	// A second visit: the wasm comes from the cache, not the host.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	settle(t, ctx)
	drawn(t, ctx)
	_, second := host.total()
	for _, req := range []string{"GET /app.wasm.gz", "GET /app.wasm", "HEAD /app.wasm"} {
		if second[req] != first[req] {
			t.Errorf("the reload asked the host for app.wasm again (%s: %d bytes, then %d)", req, first[req], second[req])
		}
	}
	if p := progress(t, ctx); p["source"] != "cache" {
		t.Errorf("the reload loaded app.wasm from %v, want the cache", p["source"])
	}
	// Controlled by the worker now: the API and app.wasm go past it straight
	// to the network (a live measurement's requests never wait for it), the
	// probes and the page's files through its fetch handler.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`fetch("app.wasm", {method: "HEAD"}).then(r => r.ok)`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for path, want := range map[string]string{"/app.wasm": "network", "/api/health": "fetch-event"} {
		if routed[path] != want {
			t.Errorf("the service worker routed %s to %q, want %q (all: %v)", path, routed[path], want, routed)
		}
	}
	mu.Unlock()

	// A new build on the host: a new version and a changed page.
	page, err := os.ReadFile(siteDir + "/index.html")
	if err != nil {
		t.Fatal(err)
	}
	v2 := v1 + "-e2e"
	wasm, err := os.Stat(siteDir + "/app.wasm")
	if err != nil {
		t.Fatal(err)
	}
	host.fs.set("version.js", fmt.Sprintf("self.servelabBuild = {version: %q, wasmBytes: %d};\n", v2, wasm.Size()))
	host.fs.set("index.html", strings.Replace(string(page), "</head>", `<meta name="servelab-e2e" content="new build">`+"\n</head>", 1))
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	if !settle(t, ctx) {
		t.Fatal("the new build did not make itself available offline")
	}
	if got := eval[string](t, ctx, `servelabBuild.version + " " + !!document.querySelector('meta[name="servelab-e2e"]')`); got != v2+" true" {
		t.Fatalf("after a reload the page is %q, want the new build %q", got, v2+" true")
	}
	// The new build's worker takes over and drops the old build's cache.
	want := "servelab-" + v2
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		keys, err := chromedp.Run(ctx, chromedp.Evaluate[string](`caches.keys().then(k => k.join(","))`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if keys == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the caches are %q, want only the new build's %q", keys, want)
		}
	}

	// The host goes away: the new build still loads and draws.
	host.stop()
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatalf("reload with the host gone: %v", err)
	}
	drawn(t, ctx)
	if got := eval[string](t, ctx, `servelabBuild.version + " " + !!document.querySelector('meta[name="servelab-e2e"]')`); got != v2+" true" {
		t.Errorf("offline the page is %q, want the new build %q", got, v2+" true")
	}
	if p := progress(t, ctx); p["source"] != "cache" {
		t.Errorf("offline app.wasm came from %v, want the cache", p["source"])
	}
	for _, id := range []string{"fig-ttft-p90", "fig-tpot-p90"} {
		if txt := eval[string](t, ctx, fmt.Sprintf(`document.getElementById(%q).textContent`, id)); txt == "" || txt == "–" {
			t.Errorf("offline #%s shows %q, want a number", id, txt)
		}
	}
}

// pythonHost runs `python3 -m http.server` in site/ (the example of
// a plain static host) behind a relay that counts every byte it sends.
func pythonHost(t *testing.T) (url string, sent *atomic.Int64) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is required to serve site/ as a plain static host; .ci/run installs it (apt-get install -y python3)")
	}
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	cmd := exec.Command(py, "-m", "http.server", "--bind", "127.0.0.1", "--directory", siteDir, strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	upstream := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", upstream); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("python3 -m http.server did not start on %s", upstream)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	sent = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", upstream)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				n, _ := io.Copy(c, up)
				sent.Add(n)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/", sent
}

// TestPythonHTTPServer is the check as it is worded: served by
// python3 -m http.server from site/, the page transfers at most 4.5 MB in
// all (counted on the wire, headers included) and draws.
func TestPythonHTTPServer(t *testing.T) {
	url, sent := pythonHost(t)
	var console consoleErrors
	ctx := browser(t, chromedp.WithListener(console.listen))
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	offline := settle(t, ctx)
	drawn(t, ctx)
	t.Logf("python3 -m http.server sent %.2f MB in all (offline copy made: %v)", float64(sent.Load())/1e6, offline)
	if n := sent.Load(); n > maxStaticBytes {
		t.Errorf("python3 -m http.server sent %.2f MB for one visit, want at most %.1f MB", float64(n)/1e6, maxStaticBytes/1e6)
	}
	if p := progress(t, ctx); p["source"] != "app.wasm.gz" || p["done"] != true {
		t.Errorf("load progress %v, want app.wasm.gz", p)
	}
	if errs := console.get(); len(errs) > 0 {
		t.Errorf("the console shows errors on load from python3 -m http.server:\n%s", strings.Join(errs, "\n"))
	}
}
