package main

import (
	"fmt"
	"io"
	"os"

	"servelab/sim"
	"servelab/sim/results"
)

// traceUnits are the --trace-unit values: seconds per numeric arrival unit.
var traceUnits = map[string]float64{"": 0, "s": 1, "ms": 1e-3, "us": 1e-6}

// readTraceFile reads a replay trace (CSV or JSONL of arrival, prompt,
// output); unit names numeric arrivals' unit ("" goes by the column name).
func readTraceFile(path, unit string) ([]sim.Request, error) {
	scale, ok := traceUnits[unit]
	if !ok {
		return nil, fmt.Errorf("--trace-unit must be s, ms or us, got %q", unit)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, results.MaxTraceBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return results.ReadTrace(path, data, scale, nil)
}
