// Package site holds the playground's static files (the page, its css and
// scripts, and the built app.wasm with its pre-compressed variants) and an
// http.Handler that serves them.
package site

import (
	"embed"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// FS is the site's static files. The pattern app.* also matches app.js, which
// is always present, so the package compiles before `make wasm` has built
// app.wasm; the page then says the app is missing. api/ holds the answers a
// static host gives the page's probes for a companion or an edge proxy
// ("neither"); where one runs, it answers those paths itself.
//
//go:embed *.html *.css *.js *.svg app.* api
var FS embed.FS

// contentTypes are the types of the files the site serves; anything else is
// refused so a directory holding other files does not leak them.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".json": "application/json",
	".wasm": "application/wasm",
	".png":  "image/png",
	".svg":  "image/svg+xml",
	".txt":  "text/plain; charset=utf-8",
}

// markers are the files without an extension that the site serves: the
// static answers to the page's probes (api/health, api/info), so that a host
// without the API answers them without an error in the console.
var markers = map[string]string{
	"api/health": "application/json",
	"api/info":   "application/json",
}

// encodings are the pre-compressed variants tried, best first.
var encodings = []struct{ token, suffix string }{{"br", ".br"}, {"gzip", ".gz"}}

// Handler serves the files of fsys: "/" is index.html, each file gets its
// content type, and when the client accepts br or gzip and a NAME.br or
// NAME.gz sits next to NAME, that variant is sent with Content-Encoding.
func Handler(fsys fs.FS) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		ctype, ok := contentTypes[path.Ext(name)]
		if m, isMarker := markers[name]; isMarker {
			ctype, ok = m, true
		}
		if !ok || !fs.ValidPath(name) {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Vary", "Accept-Encoding")
		// Revalidate every time: a rebuilt app.wasm must never meet a stale page.
		h.Set("Cache-Control", "no-cache")
		for _, e := range encodings {
			if !accepts(r.Header.Get("Accept-Encoding"), e.token) {
				continue
			}
			if serveFile(w, r, fsys, name+e.suffix, e.token) {
				return
			}
		}
		if !serveFile(w, r, fsys, name, "") {
			h.Del("Content-Type")
			http.NotFound(w, r)
		}
	})
}

// serveFile sends one file, with encoding as its Content-Encoding when not
// empty, and reports whether the file existed.
func serveFile(w http.ResponseWriter, r *http.Request, fsys fs.FS, name, encoding string) bool {
	f, err := fsys.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		return false
	}
	if encoding != "" {
		w.Header().Set("Content-Encoding", encoding)
	}
	if rs, ok := f.(io.ReadSeeker); ok {
		// ServeContent handles HEAD, ranges and If-Modified-Since; the
		// content type is already set so it does not sniff.
		http.ServeContent(w, r, name, st.ModTime(), rs)
		return true
	}
	data, err := io.ReadAll(f)
	if err != nil {
		http.Error(w, "read "+name+": "+err.Error(), http.StatusInternalServerError)
		return true
	}
	http.ServeContent(w, r, name, time.Time{}, strings.NewReader(string(data)))
	return true
}

// accepts reports whether an Accept-Encoding header value allows token
// (q=0 refuses it).
func accepts(header, token string) bool {
	for _, part := range strings.Split(header, ",") {
		fields := strings.Split(part, ";")
		if !strings.EqualFold(strings.TrimSpace(fields[0]), token) {
			continue
		}
		for _, p := range fields[1:] {
			p = strings.ReplaceAll(strings.TrimSpace(p), " ", "")
			if p == "q=0" || p == "q=0.0" || p == "q=0.00" || p == "q=0.000" {
				return false
			}
		}
		return true
	}
	return false
}
