package main

import (
	"io"
	"os"
	"path/filepath"
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

func TestStageAssetsRefusesAnOversizeFileWithoutVariant(t *testing.T) {
	site := t.TempDir()
	writeFiles(t, site, map[string]int{"index.html": 10, "app.wasm": maxAssetBytes + 1})
	if _, err := stageAssets(site, filepath.Join(t.TempDir(), "a"), io.Discard); err == nil || !strings.Contains(err.Error(), "app.wasm") {
		t.Errorf("err = %v, want one naming app.wasm", err)
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
