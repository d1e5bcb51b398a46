//go:build !js

package sim

import (
	"syscall"
	"testing"
)

// cpuTime is the process's CPU time so far (all threads), in seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// reportCPU adds a benchmark's CPU time per op (cpu-ms/op) beside its wall
// time: on a shared machine the wall time includes waiting for a CPU.
func reportCPU(b *testing.B, start float64) {
	if b.N > 0 {
		b.ReportMetric((cpuTime()-start)*1e3/float64(b.N), "cpu-ms/op")
	}
}
