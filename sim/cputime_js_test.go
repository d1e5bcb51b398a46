//go:build js

package sim

import "testing"

// cpuTime is not known under wasm.
func cpuTime() float64 { return 0 }

// reportCPU reports nothing under wasm.
func reportCPU(*testing.B, float64) {}
