package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"

	"servelab/sim"
	"servelab/sim/lecture"
	"servelab/sim/scenario"
)

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "interference [flags]", stderr)
	ef := addExperimentFlags(fs, scenario.StepGroup)
	scenario.BindKnobs(fs, &ef.x, "requests", "prompt", "output", "seed", "ttft-slo", "tpot-slo")
	asJSON := fs.Bool("json", false, "print JSON instead of tables")
	x := &ef.x
	if len(args) == 0 || args[0] != "interference" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fs.Usage()
			return nil
		}
		fs.Usage()
		return fmt.Errorf("the only demo is \"interference\"")
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	step, err := ef.stepModel()
	if err != nil {
		return err
	}
	lec, demos, err := lecture.Of(x, step)
	if err != nil {
		return err
	}
	if x.Requests <= 5000 {
		// A lecture-sized demo allocates a few tens of MB in all (its runs
		// reuse their memory): collecting that costs a fifth of the demo.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
	}
	res, err := computeInterference(lec, demos)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	printInterference(stdout, res)
	return nil
}

// computeInterference runs every demo (lecture.Lecture.Interference, the same
// jobs the page runs one by one). The jobs are independent, so they go in
// parallel here, one worker per CPU, each on its own memory; the results
// are the same in any order. Demo 3's single instances go first and its split searches (which
// need their goodputs) go ahead of the rest as soon as they can, so the
// longest chain starts early.
func computeInterference(lec lecture.Lecture, d lecture.Demos) (*lecture.Interference, error) {
	res, jobs := lec.Interference(d)
	slices.SortStableFunc(jobs, func(a, b lecture.Job) int { return boolOrder(a.Demo != 3, b.Demo != 3) })
	var (
		mu      sync.Mutex
		wake    = sync.NewCond(&mu)
		pending = len(jobs) // queued or running
		single  = 0         // demo 3's single-instance jobs not yet done
		err     error
	)
	for _, j := range jobs {
		if j.Demo == 3 {
			single++
		}
	}
	work := func(mem *sim.Scratch) {
		mu.Lock()
		defer mu.Unlock()
		for {
			for len(jobs) == 0 && pending > 0 {
				wake.Wait()
			}
			if len(jobs) == 0 {
				return
			}
			j := jobs[0]
			jobs = jobs[1:]
			mu.Unlock()
			jerr := j.Run(mem)
			mu.Lock()
			pending--
			if jerr != nil && err == nil {
				err = jerr
			}
			if j.Demo == 3 && single > 0 {
				if single--; single == 0 && err == nil {
					// Then the full simulations of DistServe's 2P+1D and of
					// the best split, their searches bracketed by the arithmetic.
					splits := lec.Demo3Splits(res)
					jobs, pending = append(splits, jobs...), pending+len(splits)
				}
			}
			wake.Broadcast()
		}
	}
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() { defer wg.Done(); work(&sim.Scratch{}) }() // a worker's runs reuse its memory
	}
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return res, nil
}

// boolOrder orders false before true.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func printInterference(w io.Writer, r *lecture.Interference) {
	c := r.Config
	fmt.Fprintf(w, "The interference lecture, computed: %s on one %s, Poisson arrivals (seed %d), %d requests of %d prompt / %d output tokens.\n",
		r.Model, r.GPU, c.Seed, c.Requests, c.Prompt, c.Output)

	fmt.Fprintf(w, "\nDemo 1 — one prefill inside a decode batch: how much slower does the step get?\n")
	fmt.Fprintf(w, "32 sequences decoding (context 700 each) plus one new prompt of L tokens in the same step:\n\n")
	rows := make([][]string, len(r.Demo1))
	for i, d := range r.Demo1 {
		rows[i] = []string{fmt.Sprint(d.Prompt), ms(d.DecodeOnly), ms(d.Mixed), fmt.Sprintf("%.2fx", d.DecodeSlowdown),
			ms(d.PrefillOnly), fmt.Sprintf("%.2fx", d.PrefillSlowdown), string(d.MixedBound)}
	}
	table(w, []string{"prompt L", "decode only", "decode+prefill", "decode slowed", "prefill only", "prefill slowed", "mixed step is"}, rows)
	first, last := r.Demo1[0], r.Demo1[len(r.Demo1)-1]
	observe(w,
		fmt.Sprintf("A decode step alone takes %s: it is memory-bound, reading the weights and KV cache while compute idles.", ms(first.DecodeOnly)),
		fmt.Sprintf("A %d-token prompt adds almost nothing (%s, %.2fx): its FLOPs hide under the weight reads.", first.Prompt, ms(first.Mixed), first.DecodeSlowdown),
		fmt.Sprintf("A %d-token prompt makes the step %s-bound and %.1fx slower: every decoding user's next token is late by that much.", last.Prompt, last.MixedBound, last.DecodeSlowdown),
		fmt.Sprintf("The prefill is slowed far less (%.2fx at %d tokens): interference hurts decode most.", last.PrefillSlowdown, last.Prompt))

	fmt.Fprintf(w, "\nDemo 2 — P90 TTFT and TPOT as the arrival rate grows\n\n")
	rows = make([][]string, len(r.Demo2))
	for i, d := range r.Demo2 {
		rows[i] = []string{fmt.Sprintf("%g", d.Rate), ms(d.ColocatedTTFT90), ms(d.ColocatedTPOT90), ms(d.PrefillTTFT90), ms(d.DecodeTPOT90)}
	}
	table(w, []string{"rate (req/s)", "colocated P90 TTFT", "colocated P90 TPOT", "prefill-only P90 TTFT", "decode-only P90 TPOT"}, rows)
	lo, hi := r.Demo2[0], r.Demo2[len(r.Demo2)-1]
	observe(w,
		fmt.Sprintf("Colocated, P90 TPOT goes from %s at %g req/s to %s at %g req/s (%.1fx): more arrivals mean more prefill steps interrupting decode.",
			ms(lo.ColocatedTPOT90), lo.Rate, ms(hi.ColocatedTPOT90), hi.Rate, hi.ColocatedTPOT90/lo.ColocatedTPOT90),
		fmt.Sprintf("A decode-only GPU keeps P90 TPOT between %s and %s over the same rates: bigger batches share one weight read.",
			ms(minOf(r.Demo2, func(d lecture.Demo2Row) float64 { return d.DecodeTPOT90 })), ms(maxOf(r.Demo2, func(d lecture.Demo2Row) float64 { return d.DecodeTPOT90 }))),
		fmt.Sprintf("A prefill-only GPU answers in %s at %g req/s; colocated TTFT is %s there because new prompts wait behind decode steps.",
			ms(lo.PrefillTTFT90), lo.Rate, ms(lo.ColocatedTTFT90)))

	d := r.Demo3
	fmt.Fprintf(w, "\nDemo 3 — goodput per GPU, colocated vs disaggregated (SLO: TTFT <= %s, TPOT <= %s, %.0f%% attained)\n\n",
		ms(d.SLO.TTFT), ms(d.SLO.TPOT), d.Attainment*100)
	rows = [][]string{
		{"colocated (prefill-first)", "1", fmt.Sprintf("%.1f", d.Colocated), fmt.Sprintf("%.1f", d.Colocated)},
		{"prefill-only", "1", fmt.Sprintf("%.1f", d.Prefill), "-"},
		{"decode-only", "1", fmt.Sprintf("%.1f", d.Decode), "-"},
	}
	for _, s := range d.Splits {
		if s.Prefill+s.Decode == 0 {
			continue // no best split: no rate meets the objectives
		}
		rows = append(rows, []string{fmt.Sprintf("%d prefill + %d decode", s.Prefill, s.Decode), fmt.Sprint(s.Prefill + s.Decode),
			fmt.Sprintf("%.1f", s.Total), fmt.Sprintf("%.1f", s.PerGPU)})
	}
	table(w, []string{"configuration", "GPUs", "goodput (req/s)", "per GPU"}, rows)
	fmt.Fprintf(w, "\nThe same splits fully simulated (least-loaded router, KV moved over the GPU's %s link):\n\n", r.GPU)
	rows = rows[:0]
	for _, s := range d.Simulated {
		vs := "-"
		if d.Colocated > 0 {
			vs = fmt.Sprintf("%.1fx", s.PerGPU/d.Colocated)
		}
		rows = append(rows, []string{fmt.Sprintf("%d prefill + %d decode", s.Prefill, s.Decode), fmt.Sprint(s.Prefill + s.Decode),
			fmt.Sprintf("%.1f", s.Total), fmt.Sprintf("%.1f", s.PerGPU), vs})
	}
	table(w, []string{"configuration", "GPUs", "goodput (req/s)", "per GPU", "vs colocated"}, rows)
	if d.Best.Total == 0 {
		observe(w,
			fmt.Sprintf("No rate meets these objectives: one prefill GPU sustains %.1f req/s within them, one decode GPU %.1f, so no split has a goodput (and colocated %.1f).", d.Prefill, d.Decode, d.Colocated),
			"Relax --ttft-slo or --tpot-slo to compare the splits.")
	} else {
		observe(w,
			fmt.Sprintf("Colocated, the stricter objective limits goodput to %.1f req/s per GPU.", d.Colocated),
			fmt.Sprintf("Split, each phase meets only its own objective: one prefill GPU sustains %.1f req/s, one decode GPU %.1f.", d.Prefill, d.Decode),
			fmt.Sprintf("The best ratio (%d prefill : %d decode) gives %.1f req/s per GPU, %.1fx colocated. (DistServe's paper reports 2.1x for OPT-13B on A100.)",
				d.Best.Prefill, d.Best.Decode, d.Best.PerGPU, d.Advantage),
			"The arithmetic assumes perfect balancing and free KV transfer; the simulation pays for both, and pooling requests over several prefill instances can even beat it.")
	}

	fmt.Fprintf(w, "\nDemo 4 — chunked prefill at %g req/s: each step carries every decode plus a prefill chunk of at most the budget\n\n", r.Config.Rate4)
	rows = make([][]string, len(r.Demo4))
	for i, d := range r.Demo4 {
		b := "-"
		if d.Budget > 0 {
			b = fmt.Sprint(d.Budget)
		}
		rows[i] = []string{d.Policy, b, ms(d.TTFTP50), ms(d.TTFTP90), ms(d.TPOTP50), ms(d.TPOTP90)}
	}
	table(w, []string{"policy", "budget", "P50 TTFT", "P90 TTFT", "P50 TPOT", "P90 TPOT"}, rows)
	base, small, big := r.Demo4[0], r.Demo4[1], r.Demo4[len(r.Demo4)-1]
	mono := "rises steadily"
	for i := 2; i < len(r.Demo4); i++ {
		if r.Demo4[i].TTFTP90 > r.Demo4[i-1].TTFTP90 {
			mono = "is not monotonic in the budget"
		}
	}
	observe(w,
		fmt.Sprintf("Chunking lowers P90 TPOT from %s (prefill-first) to %s (budget %d) and %s (budget %d): decode is never stuck behind a whole prompt.",
			ms(base.TPOTP90), ms(big.TPOTP90), big.Budget, ms(small.TPOTP90), small.Budget),
		fmt.Sprintf("The price is TTFT: P90 goes from %s at budget %d to %s at budget %d, and in between it %s.",
			ms(big.TTFTP90), big.Budget, ms(small.TTFTP90), small.Budget, mono),
		"Chunked prefill trades TTFT for TPOT; the interference is spread thin, not removed.")
}

func minOf[T any](xs []T, f func(T) float64) float64 {
	m := f(xs[0])
	for _, x := range xs[1:] {
		m = min(m, f(x))
	}
	return m
}

func maxOf[T any](xs []T, f func(T) float64) float64 {
	m := f(xs[0])
	for _, x := range xs[1:] {
		m = max(m, f(x))
	}
	return m
}
