package main

import (
	"fmt"
	"os"

	"servelab/sim"
)

// readTraceFile reads a replay trace (CSV or JSONL of arrival, prompt, output).
func readTraceFile(path string) ([]sim.Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	defer f.Close()
	return sim.ReadTrace(f, path)
}
