// Command bundle builds the Cloudflare Worker (what `make worker` runs):
//
//	script/  edge.mjs (the entry), worker.mjs, runtime.mjs and wasm_exec.js
//	         from github.com/syumai/workers, and app.wasm built from cmd/worker
//	assets/  the site's servable files, for wrangler's assets directory (and
//	         workerd's disk service locally)
//	workerd.capnp  a workerd configuration that serves both, for trying the
//	         worker locally (`make worker-local`) and for the e2e test
//
// It prints the script's size, raw and gzipped, and fails when the gzipped
// script is over the Workers limit, or when a static file is over the
// per-file limit for assets.
package main

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed edge.mjs
var edgeMJS []byte

// Cloudflare's limits: the script after compression (free plan; paid is
// 10 MB) and one static asset.
const (
	maxScriptGzip = 3_000_000
	maxAssetBytes = 25 << 20
)

// servable are the extensions site.Handler serves; other files in site/
// (Go sources, tests) are not staged.
var servable = map[string]bool{".html": true, ".css": true, ".js": true, ".json": true,
	".wasm": true, ".png": true, ".svg": true, ".txt": true}

// Local is the environment workerd.capnp gives the worker: what wrangler's
// vars and secrets give it on Cloudflare.
type Local struct {
	Listen    string // address workerd listens on (--socket-fd http=N overrides it)
	Lab       string // LAB_SERVER_URL
	APIKey    string // LAB_API_KEY
	MaxTokens int    // MAX_TOKENS; 0 leaves it unset
	MaxBody   int    // MAX_BODY_BYTES
	PerMinute int    // RATE_LIMIT_PER_MINUTE
	Burst     int    // RATE_LIMIT_BURST
}

func main() {
	out := flag.String("o", "build/worker", "output directory")
	siteDir := flag.String("site", "site", "the site's static files")
	var loc Local
	flag.StringVar(&loc.Listen, "listen", "127.0.0.1:8787", "workerd.capnp: the address to listen on")
	flag.StringVar(&loc.Lab, "lab", "http://127.0.0.1:8000", "workerd.capnp: the lab server (LAB_SERVER_URL)")
	flag.StringVar(&loc.APIKey, "api-key", "", "workerd.capnp: the lab server's API key (LAB_API_KEY)")
	flag.IntVar(&loc.MaxTokens, "max-tokens", 0, "workerd.capnp: MAX_TOKENS (0: the worker's default)")
	flag.IntVar(&loc.MaxBody, "max-body", 0, "workerd.capnp: MAX_BODY_BYTES (0: the worker's default)")
	flag.IntVar(&loc.PerMinute, "per-minute", 0, "workerd.capnp: RATE_LIMIT_PER_MINUTE (0: the worker's default)")
	flag.IntVar(&loc.Burst, "burst", 0, "workerd.capnp: RATE_LIMIT_BURST (0: the worker's default)")
	flag.Parse()
	if err := build(*out, *siteDir, loc, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func build(out, siteDir string, loc Local, log io.Writer) error {
	script := filepath.Join(out, "script")
	// workers-assets-gen empties its output directory first.
	gen := exec.Command("go", "run", "github.com/syumai/workers/cmd/workers-assets-gen", "-mode=go", "-o", script)
	if err := run(gen); err != nil {
		return err
	}
	wasm := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(script, "app.wasm"), "./cmd/worker")
	wasm.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if err := run(wasm); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(script, "edge.mjs"), edgeMJS, 0o644); err != nil {
		return err
	}
	raw, gz, err := dirSize(script)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "worker script %s: %d bytes, %d bytes gzip -9 (limit %d)\n", script, raw, gz, maxScriptGzip)
	if gz > maxScriptGzip {
		return fmt.Errorf("the worker script is %d bytes gzipped, over the Workers limit of %d", gz, maxScriptGzip)
	}
	n, err := stageAssets(siteDir, filepath.Join(out, "assets"), log)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "static assets %s: %d files\n", filepath.Join(out, "assets"), n)
	if err := os.WriteFile(filepath.Join(out, "workerd.capnp"), []byte(workerdConfig(loc)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(log, "local run: cd %s && workerd serve workerd.capnp  (http://%s, lab server %s)\n", out, loc.Listen, loc.Lab)
	return nil
}

// workerdConfig is workerd's configuration for the bundle: the worker with
// its settings as text bindings, the assets directory as a disk service
// bound as ASSETS (what wrangler's assets directory is on Cloudflare), and a
// network service that lets fetch reach loopback and private addresses,
// where a lab server usually is.
func workerdConfig(loc Local) string {
	var b strings.Builder
	b.WriteString(`using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .edge),
    (name = "assets", disk = (path = "assets")),
    (name = "net", network = (allow = ["public", "private", "local"])),
  ],
`)
	fmt.Fprintf(&b, "  sockets = [(name = \"http\", address = %q, http = (), service = \"main\")],\n);\n", loc.Listen)
	b.WriteString(`
const edge :Workerd.Worker = (
  modules = [
    (name = "edge.mjs", esModule = embed "script/edge.mjs"),
    (name = "worker.mjs", esModule = embed "script/worker.mjs"),
    (name = "runtime.mjs", esModule = embed "script/runtime.mjs"),
    (name = "wasm_exec.js", esModule = embed "script/wasm_exec.js"),
    (name = "app.wasm", wasm = embed "script/app.wasm"),
  ],
  compatibilityDate = "2025-01-01",
  globalOutbound = "net",
  bindings = [
    (name = "ASSETS", service = "assets"),
`)
	text := func(name, v string) {
		if v != "" {
			fmt.Fprintf(&b, "    (name = %q, text = %q),\n", name, v)
		}
	}
	num := func(name string, v int) {
		if v > 0 {
			text(name, fmt.Sprint(v))
		}
	}
	text("LAB_SERVER_URL", loc.Lab)
	text("LAB_API_KEY", loc.APIKey)
	num("MAX_TOKENS", loc.MaxTokens)
	num("MAX_BODY_BYTES", loc.MaxBody)
	num("RATE_LIMIT_PER_MINUTE", loc.PerMinute)
	num("RATE_LIMIT_BURST", loc.Burst)
	b.WriteString("  ],\n);\n")
	return b.String()
}

func run(c *exec.Cmd) error {
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %v", strings.Join(c.Args, " "), err)
	}
	return nil
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// dirSize sums the files of dir, raw and each gzipped at the best level (as
// the upload compresses them).
func dirSize(dir string) (raw, gz int64, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, 0, err
		}
		z, err := gzipBytes(b)
		if err != nil {
			return 0, 0, err
		}
		raw += int64(len(b))
		gz += int64(len(z))
	}
	return raw, gz, nil
}

// stageAssets copies the servable files of siteDir (and their .br/.gz
// variants) into dst. A file over the per-asset limit is left out when a
// compressed variant of it exists (edge.mjs serves that), and staged
// gzipped otherwise.
func stageAssets(siteDir, dst string, log io.Writer) (int, error) {
	if err := os.RemoveAll(dst); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return 0, err
	}
	entries, err := os.ReadDir(siteDir)
	if err != nil {
		return 0, err
	}
	have := map[string]int64{}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			have[e.Name()] = info.Size()
		}
	}
	var names []string
	for name := range have {
		base := strings.TrimSuffix(strings.TrimSuffix(name, ".br"), ".gz")
		if servable[filepath.Ext(base)] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	n := 0
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(siteDir, name))
		if err != nil {
			return n, err
		}
		if len(b) > maxAssetBytes {
			_, br := have[name+".br"]
			_, gz := have[name+".gz"]
			if !br && !gz {
				// Only gzipped then; edge.mjs unpacks it for the rare client that takes no gzip.
				if b, err = gzipBytes(b); err != nil {
					return n, err
				}
				if len(b) > maxAssetBytes {
					return n, fmt.Errorf("%s is %d bytes gzipped, over the %d-byte limit for a static asset", name, len(b), maxAssetBytes)
				}
				fmt.Fprintf(log, "%s is over the asset limit: staged as %s.gz (%d bytes) only\n", name, name, len(b))
				name += ".gz"
			} else {
				fmt.Fprintf(log, "left out %s (%d bytes, over the asset limit): its compressed variants are served instead\n", name, len(b))
				continue
			}
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			return n, err
		}
		n++
	}
	if _, ok := have["index.html"]; !ok {
		fmt.Fprintf(log, "warning: %s has no index.html\n", siteDir)
	}
	if _, ok := have["app.wasm"]; !ok {
		fmt.Fprintf(log, "warning: %s has no app.wasm: run `make wasm` first\n", siteDir)
	}
	return n, nil
}
