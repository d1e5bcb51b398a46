package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, dir string, files map[string]int) {
	for name, size := range files {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStageAssetsKeepsServableFilesUnderTheLimit(t *testing.T) {
	site, dst := t.TempDir(), filepath.Join(t.TempDir(), "assets")
	writeFiles(t, site, map[string]int{
		"index.html": 10, "style.css": 10, "site.go": 10, "notes.md": 10,
		"app.wasm": maxAssetBytes + 1, "app.wasm.gz": 100, "app.wasm.br": 90,
	})
	n, err := stageAssets(site, dst, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	entries, _ := os.ReadDir(dst)
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := "app.wasm.br app.wasm.gz index.html style.css"
	if strings.Join(got, " ") != want || n != 4 {
		t.Errorf("staged %v (%d), want %s", got, n, want)
	}
}

func TestStageAssetsGzipsAnOversizeFileWithoutVariant(t *testing.T) {
	site, dst := t.TempDir(), filepath.Join(t.TempDir(), "a")
	writeFiles(t, site, map[string]int{"index.html": 10, "app.wasm": maxAssetBytes + 1})
	if _, err := stageAssets(site, dst, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dst, "app.wasm")); err == nil {
		t.Error("the oversize app.wasm was staged")
	}
	f, err := os.Open(filepath.Join(dst, "app.wasm.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil || n != maxAssetBytes+1 {
		t.Errorf("app.wasm.gz unpacks to %d bytes (%v), want %d", n, err, maxAssetBytes+1)
	}
}

func TestWorkerdConfigCarriesTheSettings(t *testing.T) {
	c := workerdConfig(Local{Listen: "127.0.0.1:9", Lab: "http://10.0.0.5:8000", MaxTokens: 77, Burst: 3})
	for _, want := range []string{`address = "127.0.0.1:9"`, `(name = "LAB_SERVER_URL", text = "http://10.0.0.5:8000")`,
		`(name = "MAX_TOKENS", text = "77")`, `(name = "RATE_LIMIT_BURST", text = "3")`, `(name = "ASSETS", service = "assets")`,
		`esModule = embed "script/edge.mjs"`, `wasm = embed "script/app.wasm"`} {
		if !strings.Contains(c, want) {
			t.Errorf("workerd.capnp lacks %s:\n%s", want, c)
		}
	}
	for _, unset := range []string{"LAB_API_KEY", "MAX_BODY_BYTES", "RATE_LIMIT_PER_MINUTE"} {
		if strings.Contains(c, unset) {
			t.Errorf("workerd.capnp sets %s, which was not given", unset)
		}
	}
}

// TestStageAssetsKeepsTheOfflineShell: every file of the real site that its
// service worker (site/sw.js) keeps for offline use is staged, so the worker
// serves it and the worker's install does not fail.
func TestStageAssetsKeepsTheOfflineShell(t *testing.T) {
	siteDir := filepath.Join("..", "..", "..", "site")
	sw, err := os.ReadFile(filepath.Join(siteDir, "sw.js"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`var SHELL = \[([^\]]*)\]`).FindSubmatch(sw)
	if m == nil {
		t.Fatal("site/sw.js has no SHELL list")
	}
	dst := filepath.Join(t.TempDir(), "assets")
	if _, err := stageAssets(siteDir, dst, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, q := range append(strings.Split(string(m[1]), ","), `"sw.js"`) {
		name := strings.Trim(strings.TrimSpace(q), `"`)
		if name == "./" {
			name = "index.html"
		}
		if _, err := os.Stat(filepath.Join(siteDir, name)); err != nil {
			continue // written by make wasm (version.js, wasm_exec.js) and not built here
		}
		if _, err := os.Stat(filepath.Join(dst, name)); err != nil {
			t.Errorf("site/%s (kept offline by sw.js) is not staged for the worker", name)
		}
	}
}
