package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servelab/modelspecs"
)

func TestGGUFWritesModelAndConfig(t *testing.T) {
	dir := t.TempDir()
	model, cfg := filepath.Join(dir, "m", "tiny.gguf"), filepath.Join(dir, "config.json")
	code, out, errs := cli(t, "gguf", "-o", model, "--hf-config", cfg, "--hidden", "64", "--heads", "2", "--kv-heads", "1", "--layers", "2", "--ffn", "96")
	if code != 0 || !strings.Contains(out, "wrote "+model) {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	b, err := os.ReadFile(model)
	if err != nil || !bytes.HasPrefix(b, []byte("GGUF\x03\x00\x00\x00")) {
		t.Fatalf("%s: not a GGUF v3 file (%v)", model, err)
	}
	if _, err := os.Stat(model + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file was left behind")
	}
	c, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := modelspecs.FromHFConfig(c, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Layers != 2 || m.Hidden != 64 || m.Heads != 2 || m.KVHeads != 1 || m.HeadDim != 32 || m.Intermediate != 96 || m.Tied || !m.Gated {
		t.Errorf("config.json reads as %+v", m)
	}
}

func TestGGUFRejectsBadShapes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--hidden", "128"}, "-o FILE"},
		{[]string{"-o", filepath.Join(dir, "a.gguf"), "--heads", "3"}, "heads 3"},
		{[]string{"-o", filepath.Join(dir, "b.gguf"), "--layers", "0"}, "layers 0"},
	} {
		code, _, errs := cli(t, append([]string{"gguf"}, tc.args...)...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("gguf %v: exit %d, %q; want an error naming %q", tc.args, code, errs, tc.want)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) > 0 {
		t.Errorf("a refused shape left files: %v", files)
	}
}

// -o and --hf-config through symlinks write the links' targets and keep the links.
func TestGGUFKeepsSymlinks(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"tiny.gguf", "config.json"} {
		if err := os.WriteFile(filepath.Join(dir, "real-"+n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real-"+n, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := cli(t, "gguf", "-o", filepath.Join(dir, "tiny.gguf"), "--hf-config", filepath.Join(dir, "config.json"),
		"--hidden", "64", "--heads", "2", "--kv-heads", "1", "--layers", "2", "--ffn", "96")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	for _, n := range []string{"tiny.gguf", "config.json"} {
		if st, err := os.Lstat(filepath.Join(dir, n)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: the symlink was replaced (%v)", n, err)
		}
		if st, err := os.Stat(filepath.Join(dir, "real-"+n)); err != nil || st.Size() == 0 {
			t.Errorf("%s: the link's target was not written (%v)", n, err)
		}
	}
}
