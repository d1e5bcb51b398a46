package lecture_test

import (
	"fmt"

	"servelab/sim"
	"servelab/sim/lecture"
)

// Demo 1 is in-step interference: the lecture's decode batch (32
// sequences at context 700, Llama-3.1-8B on an H100) with one prompt of
// each length in the same step. A short prompt rides along for free; a
// long one makes the step compute-bound and slows every decode in it.
func ExampleLecture_Demo1() {
	step, err := sim.DefaultStepModel()
	if err != nil {
		panic(err)
	}
	d := lecture.Defaults(sim.SLO{TTFT: 0.1, TPOT: 0.015})
	fmt.Println("prompt  decode only  mixed     prefill only  decode slowed  bound")
	for _, r := range (lecture.Lecture{Step: step}).Demo1(d.Batch, d.Context, d.Prompts) {
		fmt.Printf("%6d  %8.2f ms  %6.2f ms  %9.2f ms  %12.2fx  %s\n",
			r.Prompt, r.DecodeOnly*1e3, r.Mixed*1e3, r.PrefillOnly*1e3, r.DecodeSlowdown, r.MixedBound)
	}
	// Output:
	// prompt  decode only  mixed     prefill only  decode slowed  bound
	//    128      7.67 ms    7.68 ms       6.65 ms          1.00x  memory
	//    512      7.67 ms   14.89 ms      14.06 ms          1.94x  compute
	//   1024      7.67 ms   28.18 ms      27.35 ms          3.67x  compute
	//   2048      7.67 ms   55.46 ms      54.64 ms          7.23x  compute
}
