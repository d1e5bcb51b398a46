package sim_test

import (
	"fmt"

	"servelab/hwspecs"
	"servelab/modelspecs"
	"servelab/sim"
)

// The lecture's step model prices a decode batch of 32 sequences at
// context 700 on Llama-3.1-8B and an H100: memory-bound, reading the
// weights once. A 512-token prompt in the same step makes it compute-bound
// and nearly doubles it.
func ExampleStepModel() {
	m, _ := modelspecs.Get("Llama-3.1-8B")
	g, _ := hwspecs.Get("H100-SXM")
	s, err := sim.NewStepModel(m, g)
	if err != nil {
		panic(err)
	}
	dec := s.Decode(32, 32*700)
	mixed := s.Mixed(32, 32*700, 512)
	fmt.Printf("decode 32 at context 700: %.2f ms (%s-bound)\n", dec.Seconds*1e3, dec.Bound)
	fmt.Printf("+ a 512-token prefill:    %.2f ms (%s-bound)\n", mixed.Seconds*1e3, mixed.Bound)
	// Output:
	// decode 32 at context 700: 7.67 ms (memory-bound)
	// + a 512-token prefill:    14.89 ms (compute-bound)
}
