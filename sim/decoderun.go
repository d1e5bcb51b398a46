package sim

import "slices"

// The fast path of a whole run. Between arrivals, completions and
// preemptions a decode-only engine repeats one step: every running sequence
// decodes one token and the context grows by the batch size. Step would
// touch every sequence each time; decodeRun prices each of those steps
// exactly as Step does (the same Work, in the same order, so every time is
// bit for bit the same) and does the per-sequence bookkeeping once for the
// whole run of steps — or, in lazy mode (lazy.go), none at all but for the
// sequences the last step finishes. Tests compare it with the plain path.

// maxDecodeRun bounds one call's steps (its scratch is two floats a step).
const maxDecodeRun = 4096

// decodesAll reports whether the policy, with nothing waiting, decodes all
// n running sequences and nothing else (true for the shipped policies; a
// policy it does not know always goes through Step).
func (e *Engine) decodesAll(n int) bool {
	switch p := e.cfg.Policy.(type) {
	case PrefillFirst, DecodeOnlyPolicy, PrefillOnlyPolicy:
		return true
	case Chunked:
		return p.ExcludeDecodes || n <= p.Budget
	}
	return false
}

// shippedPolicy reports whether the policy is one of this package's, whose
// plans the fast paths know.
func (e *Engine) shippedPolicy() bool {
	switch e.cfg.Policy.(type) {
	case PrefillFirst, Chunked, DecodeOnlyPolicy, PrefillOnlyPolicy:
		return true
	}
	return false
}

// decodeRun advances at once the steps ahead that decode every running
// sequence and nothing else: none arrives before a step starts (nor is one
// started at or after until), none waits, only the last step may finish
// sequences and no KV block can run short (which would preempt). It keeps
// no trace: callers use it only when none is wanted. It returns the steps
// taken; 0 means the next one needs Step.
func (e *Engine) decodeRun(until float64) int {
	e.arrive() // as Step would first; it is idempotent
	n := len(e.running)
	if n == 0 || e.paused || len(e.waiting) > 0 || !e.decodesAll(n) || e.cfg.Step.Model.SlidingWindow > 0 || e.cfg.Spec.K > 0 {
		return 0 // (a sliding window caps each context apart: execute prices it per sequence; a speculating step gives each a token count of its own)
	}
	next := until
	if len(e.pending) > 0 {
		next = min(next, e.pending[0].Req.Arrival)
	}
	kmax := min(e.cfg.Limits.MaxIterations-e.iters, maxDecodeRun)
	if e.lz.ok && !e.lz.on {
		e.lazyEnter()
	}
	l := e.cfg.Limits
	kvPreempt := l.KVBlocks > 0 && l.Preempt
	if e.lz.on {
		kmax = min(kmax, e.lz.nextDue()-e.lz.n+1) // up to the step that finishes the first
	} else {
		for _, s := range e.running {
			kmax = min(kmax, s.Req.Output-s.generated) // the first to finish ends the run
		}
		if kvPreempt {
			// A sequence holds blocks for its whole context, so k more tokens
			// need at most ceil(k/BlockSize) more blocks each: with that much
			// free for all n, makeDecodeRoom would never preempt.
			kmax = min(kmax, l.BlockSize*(e.freeKV/n))
		}
	}
	if kmax < 2 || !(e.now < next) {
		return 0 // one step: Step is as quick
	}

	// The steps, priced as execute prices a decode of the whole batch.
	keep := !e.lz.on || e.runHook != nil // each step's time and end are read after
	durs, ends := e.durs[:0], e.ends[:0]
	maxGap := 0.0 // the largest gap between two of these steps' ends
	done, k := 0, 0
	price := e.cfg.Step.decodePricerOf(n, e.lecture) // as execute prices a decode of the whole batch
	for ; k < kmax && e.now < next && done == 0; k++ {
		secs := price.at(float64(e.runKV))
		e.runKV += n
		e.iters++
		prev := e.now
		e.now += secs
		e.busy += secs
		switch {
		case e.lz.on:
			done = e.lazyDecode(n, e.now)
		case k > 0:
			gap := e.now - prev // as emit measures it: this end minus the last token's time
			if gap > maxGap {
				maxGap = gap
			}
			if e.cfg.CountGaps {
				e.countGap(gap, n)
			}
		}
		if keep {
			durs = append(durs, secs)
			ends = append(ends, e.now)
		}
	}
	e.durs, e.ends = durs, ends
	if !e.lz.on {
		done = e.applyRun(ends, maxGap, kvPreempt)
	}
	e.done = done
	if e.runHook != nil {
		e.runHook(n, durs, ends, done)
	}
	if done > 0 {
		e.dropFinished(done) // nothing waits: only the finishers move
	}
	return k
}

// applyRun gives each running sequence the tokens of a run of decode steps
// ending at ends, as len(ends) calls of emit would, and returns how many
// it finishes (only the last step can).
func (e *Engine) applyRun(ends []float64, maxGap float64, kvPreempt bool) int {
	k := len(ends)
	first, last := ends[0], ends[k-1]
	done := 0
	for _, s := range e.running {
		gap := first - s.last // its own first gap (a running sequence has a token)
		if gap > s.maxITL {
			s.maxITL = gap
		}
		if maxGap > s.maxITL {
			s.maxITL = maxGap
		}
		if e.cfg.CountGaps && (s.generated > 1 || e.role != DecodeOnly) {
			e.countGap(gap, 1) // as emit counts it
		}
		if s.here == 0 {
			s.here = first
		}
		s.kv += k
		s.generated += k
		s.last = last
		if e.cfg.RecordTokens {
			e.addTokens(s, ends...)
		}
		if kvPreempt {
			if want := e.blocksFor(s.kv); want > s.blocks {
				e.freeKV -= want - s.blocks
				s.blocks = want
				if e.pc.on {
					e.pcTrim()
				}
			}
		}
		if s.generated >= s.Req.Output {
			done++
		}
	}
	return done
}

// countGap adds c gaps of one value to the counts, merging a repeat of the last value.
func (e *Engine) countGap(gap float64, c int) {
	if n := len(e.gaps); n > 0 && e.gaps[n-1].Gap == gap {
		e.gaps[n-1].N += c
		return
	}
	if len(e.gaps) == cap(e.gaps) {
		// Double: append grows a long list by a quarter at a time, and a
		// big run's counts would be copied dozens of times (5x their size).
		e.gaps = slices.Grow(e.gaps, max(len(e.gaps), 64))
	}
	e.gaps = append(e.gaps, GapCount{Gap: gap, N: c})
}
