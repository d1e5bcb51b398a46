package main

import (
	"fmt"
	"io"

	"servelab/hwspecs"
	"servelab/modelspecs"
)

func runModels(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("models", "[--json]", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"models": modelspecs.All(), "gpus": hwspecs.All()})
	}
	fmt.Fprintln(stdout, "Models:")
	for _, m := range modelspecs.All() {
		fmt.Fprintf(stdout, "  %s\n", m)
	}
	fmt.Fprintln(stdout, "\nGPUs:")
	for _, g := range hwspecs.All() {
		fmt.Fprintf(stdout, "  %s\n    source: %s\n", g, g.Source)
	}
	return nil
}
