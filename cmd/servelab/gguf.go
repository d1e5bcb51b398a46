package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"servelab/cmd/internal/atomicfile"
	"servelab/cmd/internal/gguf"
)

func runGGUF(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gguf", "-o FILE [--hf-config config.json] [--hidden 128 --layers 4 --ffn 384 --heads 2 --kv-heads 2 --context 32768 --seed 1]", stderr)
	d := gguf.Default
	out := fs.String("o", "", "the file to write (required)")
	hf := fs.String("hf-config", "", "also write the model's shape as a Hugging Face config.json here (for --model-config)")
	fs.IntVar(&d.Hidden, "hidden", d.Hidden, "embedding length")
	fs.IntVar(&d.Layers, "layers", d.Layers, "transformer blocks")
	fs.IntVar(&d.FFN, "ffn", d.FFN, "feed-forward length")
	fs.IntVar(&d.Heads, "heads", d.Heads, "attention heads")
	fs.IntVar(&d.KVHeads, "kv-heads", d.KVHeads, "key/value heads")
	fs.IntVar(&d.ContextLen, "context", d.ContextLen, "the model's context length")
	fs.Uint64Var(&d.Seed, "seed", d.Seed, "seed of the random weights")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-o FILE is required")
	}
	if err := d.Validate(); err != nil {
		return err
	}
	if dir := filepath.Dir(*out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	// Written beside the target and renamed, so a half-written model is never loaded.
	if err := atomicfile.Write(*out, 0o644, func(w io.Writer) error { return gguf.Write(w, d) }); err != nil {
		return err
	}
	if *hf != "" {
		b, err := gguf.HFConfig(d)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(*hf, b, 0o644); err != nil {
			return fmt.Errorf("--hf-config: %w", err)
		}
	}
	fmt.Fprintf(stdout, "wrote %s: %d parameters (hidden %d, %d layers, ffn %d, %d heads, seed %d)\n",
		*out, d.Params(), d.Hidden, d.Layers, d.FFN, d.Heads, d.Seed)
	return nil
}
