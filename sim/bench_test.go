package sim

import "testing"

// BenchmarkRun1500 is one playground re-simulation: 1500 requests, chunked, 40 req/s, traced.
func BenchmarkRun1500(b *testing.B) {
	step := lectureStep(b)
	reqs, _ := Poisson(1500, 40, 512, 64, 0)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		if _, err := Run(Config{Step: step, Policy: Chunked{Budget: 2048}, Trace: true, RecordTokens: true}, reqs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLab is the lab workload: 60 simulated seconds, 16 streams, one 32k prompt.
func BenchmarkLab(b *testing.B) {
	step := lectureStep(b)
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		if _, err := RunLab(Config{Step: step, Policy: Chunked{Budget: 2048}}, DefaultLab()); err != nil {
			b.Fatal(err)
		}
	}
}

// pageLab is the page's lab presets (wasm/play: Presets, labWorkload, Simulate):
// 16 streams of 128/256 tokens, one 32000-token prompt at 20 s, 60 s, traced
// with every token time, each step capped as the page caps it.
func pageLab() (LabWorkload, Limits) {
	w := LabWorkload{ShortConcurrency: 16, ShortInputLen: 128, ShortOutputLen: 256,
		LongInputLen: 32000, LongOutputLen: 16, LongCount: 1, Duration: 60, InjectAfter: 20}
	return w, Limits{MaxIterations: min(150_000, 3_000_000/(w.ShortConcurrency+w.LongCount))}
}

// BenchmarkLabPresets is the page's re-simulation of its two lab presets
// (lab-unchunked, lab-chunked) as wasm/play.Simulate configures them.
func BenchmarkLabPresets(b *testing.B) {
	step := lectureStep(b)
	w, lim := pageLab()
	for _, p := range []struct {
		name string
		pol  Policy
	}{{"unchunked", PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}}, {"chunked", Chunked{Budget: 2048}}} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				if _, err := RunLab(Config{Step: step, Policy: p.pol, Trace: true, RecordTokens: true, Limits: lim}, w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRun100k is the issue's at-scale run, as `servelab sim --policy
// chunked --budget 2048 --rate 40 --prompt 512 --output 64 --requests 100000`
// computes it: the engine's default limits, gaps counted (not every token's
// time kept) and the summary, every ITL percentile exact. B/op is what the
// run allocates in all.
func BenchmarkRun100k(b *testing.B) {
	step := lectureStep(b)
	reqs, _ := Poisson(100_000, 40, 512, 64, 0)
	blocks, err := MemorySplit{}.KVBlocks(step)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, CountGaps: true,
		Limits: Limits{MaxSeqs: 256, KVBlocks: blocks, Preempt: true}}
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		out, err := Run(cfg, reqs)
		if err != nil {
			b.Fatal(err)
		}
		_ = out.Summary()
	}
}

// BenchmarkRun100kTokens is the same run keeping every token's time, as the
// CLI ran it before gaps were counted (for comparison).
func BenchmarkRun100kTokens(b *testing.B) {
	step := lectureStep(b)
	reqs, _ := Poisson(100_000, 40, 512, 64, 0)
	blocks, _ := MemorySplit{}.KVBlocks(step)
	cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, RecordTokens: true,
		Limits: Limits{MaxSeqs: 256, KVBlocks: blocks, Preempt: true}}
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		out, err := Run(cfg, reqs)
		if err != nil {
			b.Fatal(err)
		}
		_ = Summarize(out.Results)
	}
}

// BenchmarkSweep is the page's background panels for the demo-2 preset: the
// latency-vs-rate points and the goodput search, each an untraced 1500-request
// run and its summary (wasm/play.AttainmentAt).
func BenchmarkSweep(b *testing.B) {
	step := lectureStep(b)
	slo := SLO{TTFT: 0.1, TPOT: 0.015}
	one := func(rate float64) float64 {
		reqs, _ := Poisson(1500, rate, 512, 64, 1)
		out, err := Run(Config{Step: step, Policy: PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}}, reqs)
		if err != nil {
			b.Fatal(err)
		}
		_ = Summarize(out.Results)
		return Attainment(out.Results, slo)
	}
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		for _, f := range []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 2} {
			one(20 * f)
		}
		if _, _, err := Goodput(func(r float64) (float64, error) { return one(r), nil }, 0.9, 400); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDistServePreset is the page's distserve-2p1d preset as it
// re-simulates it: 1500 requests at 30 req/s on 2 prefill + 1 decode GPUs,
// traced, every token's time kept.
func BenchmarkDistServePreset(b *testing.B) {
	step := lectureStep(b)
	reqs, _ := Poisson(1500, 30, 512, 64, 1)
	c := Cluster{Step: step, Prefill: 2, Decode: 1, Trace: true, RecordTokens: true, Limits: Limits{MaxIterations: 150_000}}
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		if _, err := RunDisaggregated(c, reqs); err != nil {
			b.Fatal(err)
		}
	}
}
