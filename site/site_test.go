package site

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
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
	for _, name := range []string{"index.html", "canvas.html", "style.css", "app.js"} {
		if _, err := FS.Open(name); err != nil {
			t.Errorf("embedded site lacks %s: %v", name, err)
		}
	}
	res := get(t, Handler(FS), "GET", "/", "")
	if res.StatusCode != 200 {
		t.Fatalf("GET / on the embedded site: %d", res.StatusCode)
	}
}
