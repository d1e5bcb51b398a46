package sim

import (
	"reflect"
	"testing"
)

// The lab's loop on an engine that settles its batch lazily (as the page
// drives it, traced) gives the trace, the arrivals and the counts of the
// same loop step by step.
func TestLabSettledLazilyIsThePlainLab(t *testing.T) {
	step := lectureStep(t)
	base := LabWorkload{ShortConcurrency: 8, ShortInputLen: 200, ShortOutputLen: 60, LongInputLen: 12000, LongOutputLen: 40, LongCount: 1, Duration: 20, InjectAfter: 6}
	run := func(cfg Config, w LabWorkload, lazy bool) (*LabOutcome, []Iteration) {
		l, err := NewLab(cfg, w, nil)
		if err != nil {
			t.Fatal(err)
		}
		if lazy {
			l.Engine().SettleLazily()
		}
		out := &Outcome{}
		for {
			it, ok := l.Step()
			if !ok {
				break
			}
			out.record(it, true)
		}
		out.finish(l.e)
		return l.Finish(out), out.Iterations
	}
	for _, w := range []LabWorkload{base, DefaultLab(), {ShortConcurrency: 16, ShortInputLen: 64, ShortOutputLen: 1, LongInputLen: 4000, LongOutputLen: 8, LongCount: 2, Duration: 5, InjectAfter: 1}} {
		for _, pol := range []Policy{PrefillFirst{MaxTokens: 65536}, Chunked{Budget: 512}} {
			for _, lim := range []Limits{{}, {KVBlocks: 2000, BlockSize: 16}, {MaxIterations: 700}} {
				cfg := Config{Step: step, Policy: pol, Limits: lim, Trace: true, CountGaps: true}
				plain, pits := run(cfg, w, false)
				lazy, lits := run(cfg, w, true)
				if !reflect.DeepEqual(lits, pits) {
					t.Fatalf("%+v, %s, %+v: the lazily settled lab's trace differs", w, pol.Name(), lim)
				}
				if !reflect.DeepEqual(lazy.Run, plain.Run) || !reflect.DeepEqual(lazy.Counts, plain.Counts) || !reflect.DeepEqual(lazy.Outcome.Results, plain.Outcome.Results) {
					t.Fatalf("%+v, %s, %+v: the lazily settled lab's arrivals, counts or results differ", w, pol.Name(), lim)
				}
			}
		}
	}
}
