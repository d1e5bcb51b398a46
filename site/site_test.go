package site

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func get(t *testing.T, h http.Handler, method, target, acceptEncoding string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestHandler(t *testing.T) {
	fsys := fstest.MapFS{
		"index.html":   {Data: []byte("<!doctype html><title>x</title>")},
		"app.js":       {Data: []byte("console.log(1)")},
		"style.css":    {Data: []byte("body{}")},
		"app.wasm":     {Data: []byte("\x00asm-raw")},
		"app.wasm.gz":  {Data: gz(t, "\x00asm-raw")},
		"app.wasm.br":  {Data: []byte("brotli-bytes")},
		"only.js.gz":   {Data: gz(t, "x")},
		"secret.go":    {Data: []byte("package site")},
		"presets.json": {Data: []byte("{}")},
	}
	h := Handler(fsys)
	cases := []struct {
		name, method, path, accept string
		status                     int
		ctype, encoding, body      string
	}{
		{"root is index", "GET", "/", "", 200, "text/html; charset=utf-8", "", "<!doctype html><title>x</title>"},
		{"css type", "GET", "/style.css", "gzip", 200, "text/css; charset=utf-8", "", "body{}"},
		{"js type", "GET", "/app.js", "", 200, "text/javascript; charset=utf-8", "", "console.log(1)"},
		{"json type", "GET", "/presets.json", "", 200, "application/json", "", "{}"},
		{"wasm plain without accept", "GET", "/app.wasm", "", 200, "application/wasm", "", "\x00asm-raw"},
		{"wasm prefers br", "GET", "/app.wasm", "gzip, deflate, br, zstd", 200, "application/wasm", "br", "brotli-bytes"},
		{"wasm gzip when br refused", "GET", "/app.wasm", "gzip, br;q=0", 200, "application/wasm", "gzip", string(gz(t, "\x00asm-raw"))},
		{"wasm gzip only", "GET", "/app.wasm", "gzip", 200, "application/wasm", "gzip", string(gz(t, "\x00asm-raw"))},
		{"identity when gzip q=0", "GET", "/app.wasm", "gzip;q=0", 200, "application/wasm", "", "\x00asm-raw"},
		{"head", "HEAD", "/app.wasm", "br", 200, "application/wasm", "br", ""},
		{"missing", "GET", "/nope.html", "", 404, "", "", ""},
		{"compressed-only file is not served plain", "GET", "/only.js", "", 404, "", "", ""},
		{"unknown type refused", "GET", "/secret.go", "", 404, "", "", ""},
		{"traversal cleaned", "GET", "/../index.html", "", 200, "text/html; charset=utf-8", "", "<!doctype html><title>x</title>"},
		{"post refused", "POST", "/", "", 405, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := get(t, h, c.method, c.path, c.accept)
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != c.status {
				t.Fatalf("status %d, want %d (body %q)", res.StatusCode, c.status, body)
			}
			if c.status != 200 {
				return
			}
			if got := res.Header.Get("Content-Type"); got != c.ctype {
				t.Errorf("Content-Type %q, want %q", got, c.ctype)
			}
			if got := res.Header.Get("Content-Encoding"); got != c.encoding {
				t.Errorf("Content-Encoding %q, want %q", got, c.encoding)
			}
			if got := res.Header.Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Vary %q, want Accept-Encoding", got)
			}
			if string(body) != c.body {
				t.Errorf("body %q, want %q", body, c.body)
			}
		})
	}
}

func TestAccepts(t *testing.T) {
	for _, c := range []struct {
		header, token string
		want          bool
	}{
		{"gzip, deflate, br", "br", true},
		{"GZIP", "gzip", true},
		{"br;q=0", "br", false},
		{"br; q=0.000", "br", false},
		{"br;q=0.5", "br", true},
		{"", "gzip", false},
		{"brotli", "br", false},
	} {
		if got := accepts(c.header, c.token); got != c.want {
			t.Errorf("accepts(%q, %q) = %v, want %v", c.header, c.token, got, c.want)
		}
	}
}

// TestEmbeddedFS checks that the files the page needs are in the embedded FS.
func TestEmbeddedFS(t *testing.T) {
	for _, name := range []string{"index.html", "canvas.html", "style.css", "app.js", "load.js", "sw.js", "favicon.svg", "api/health", "api/info"} {
		if _, err := FS.Open(name); err != nil {
			t.Errorf("embedded site lacks %s: %v", name, err)
		}
	}
	res := get(t, Handler(FS), "GET", "/", "")
	if res.StatusCode != 200 {
		t.Fatalf("GET / on the embedded site: %d", res.StatusCode)
	}
}

// TestProbeAnswers: a host without the companion or the edge proxy answers
// the page's probes from the files in api/ (no 404 in the console), as JSON
// that says neither is there.
func TestProbeAnswers(t *testing.T) {
	h := Handler(FS)
	for path, field := range map[string]string{"/api/health": `"ok": false`, "/api/info": `"proxy": "none"`} {
		res := get(t, h, "GET", path, "gzip, br")
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), field) {
			t.Errorf("GET %s: %d %q %q, want 200 application/json with %s", path, res.StatusCode, res.Header.Get("Content-Type"), body, field)
		}
	}
	if res := get(t, h, "GET", "/api/other", ""); res.StatusCode != 404 {
		t.Errorf("GET /api/other: %d, want 404 (only the two probes have answers)", res.StatusCode)
	}
}

// TestOfflineShellIsServed: every file sw.js keeps for offline use is one
// the site serves (or one `make wasm` writes), so its install cannot fail on
// a renamed file.
func TestOfflineShellIsServed(t *testing.T) {
	src, err := FS.ReadFile("sw.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`var SHELL = \[([^\]]*)\]`).FindSubmatch(src)
	if m == nil {
		t.Fatal("sw.js has no SHELL list")
	}
	built := map[string]bool{"version.js": true, "wasm_exec.js": true} // written by make wasm
	h := Handler(FS)
	names := strings.Split(string(m[1]), ",")
	for _, q := range names {
		name := strings.Trim(strings.TrimSpace(q), `"`)
		if _, err := FS.Open(name); err != nil && name != "./" {
			if !built[name] {
				t.Errorf("sw.js keeps %s, which the site does not have", name)
			}
			continue
		}
		if res := get(t, h, "GET", "/"+strings.TrimPrefix(name, "./"), ""); res.StatusCode != 200 {
			t.Errorf("sw.js keeps %s, which the site answers with %d", name, res.StatusCode)
		}
	}
	// Every file of the page is kept: one added to site/ and not to SHELL
	// would be missing offline after a first visit.
	kept := map[string]bool{"index.html": true} // as "./"
	for _, q := range names {
		kept[strings.Trim(strings.TrimSpace(q), `"`)] = true
	}
	for _, want := range []string{"version.js", "wasm_exec.js"} {
		if !kept[want] {
			t.Errorf("sw.js does not keep %s, which the page needs offline", want)
		}
	}
	entries, err := fs.ReadDir(FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, "app.wasm") || name == "sw.js" {
			continue // app.wasm is kept by load.js; sw.js by the browser
		}
		if _, ok := contentTypes[path.Ext(name)]; ok && !kept[name] {
			t.Errorf("site/%s is not in sw.js's SHELL: the page would miss it offline", name)
		}
	}
}
