package main

import (
	"fmt"
	"os"

	"servelab/sim"
)

// readTraceFile reads a replay trace (CSV or JSONL).
func readTraceFile(path string) ([]sim.Request, error) {
	return nil, fmt.Errorf("--trace %s: trace replay is not built yet", path)
}

var _ = os.Open
