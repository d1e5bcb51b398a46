package sim

import "testing"

// BenchmarkRun1500 is one playground re-simulation: 1500 requests, chunked, 40 req/s, traced.
func BenchmarkRun1500(b *testing.B) {
	step := lectureStep(b)
	reqs, _ := Poisson(1500, 40, 512, 64, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(Config{Step: step, Policy: Chunked{Budget: 2048}, Trace: true, RecordTokens: true}, reqs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLab is the lab workload: 60 simulated seconds, 16 streams, one 32k prompt.
func BenchmarkLab(b *testing.B) {
	step := lectureStep(b)
	for b.Loop() {
		if _, err := RunLab(Config{Step: step, Policy: Chunked{Budget: 2048}}, DefaultLab()); err != nil {
			b.Fatal(err)
		}
	}
}
