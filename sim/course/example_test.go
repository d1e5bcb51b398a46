package course_test

import (
	"fmt"

	"servelab/sim/course"
	"servelab/sim/scenario"
)

// The speculation chapter: the preset's engine (4 MTP drafts accepted at
// 0.6 each) against none, as the rate rises. One user's tokens come about
// twice as fast while the GPU idles; once the batch makes each verify
// pass compute-bound, speculation costs more than it gives.
func ExampleSpeculative() {
	p, _ := scenario.PresetByName("speculative")
	x := scenario.Default()
	p.Apply(&x)
	tab, err := course.Speculative(x, []float64{1, 16, 80})
	if err != nil {
		panic(err)
	}
	fmt.Printf("expected %.2f tokens per step\n", tab.Expected)
	for _, r := range tab.Rows {
		fmt.Printf("%3g req/s  speed-up %.2fx  throughput %.0f -> %.0f tok/s\n", r.Rate, r.SpeedUp, r.ThroughputOff, r.ThroughputOn)
	}
	fmt.Printf("speculation loses from %g req/s\n", tab.Rows[tab.Crossover].Rate)
	// Output:
	// expected 2.31 tokens per step
	//   1 req/s  speed-up 1.93x  throughput 253 -> 253 tok/s
	//  16 req/s  speed-up 1.98x  throughput 3858 -> 3955 tok/s
	//  80 req/s  speed-up 0.95x  throughput 9286 -> 8626 tok/s
	// speculation loses from 80 req/s
}
