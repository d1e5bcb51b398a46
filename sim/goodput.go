package sim

import (
	"fmt"
	"math"
)

// Goodput is the highest arrival rate whose SLO attainment reaches target,
// found by bisection on (0, hi]. attain runs the experiment at one rate.
// The search stops when the bracket is narrower than 1% of the rate (or
// 0.01 req/s). If even hi attains the target, hi is returned and saturated
// is true: the caller's range was too small to find the knee.
func Goodput(attain func(rate float64) (float64, error), target, hi float64) (rate float64, saturated bool, err error) {
	if err := checkSearch(target, hi); err != nil {
		return 0, false, err
	}
	return bisect(func(r float64) (bool, error) {
		a, err := attain(r)
		return a >= target, err
	}, hi)
}

// checkSearch checks a goodput search's target and ceiling.
func checkSearch(target, hi float64) error {
	if !(target > 0 && target <= 1) {
		return fmt.Errorf("attainment target must be in (0, 1], got %g", target)
	}
	if !(hi > 0) || hi > MaxRate {
		return fmt.Errorf("search ceiling must be in (0, %g] req/s, got %g", MaxRate, hi)
	}
	return nil
}

// bisect is Goodput's search over ok: whether the experiment at a rate
// attains the target.
func bisect(ok func(rate float64) (bool, error), hi float64) (rate float64, saturated bool, err error) {
	if good, err := ok(hi); err != nil || good {
		return hi, good, err
	}
	lo := 0.0
	for hi-lo > math.Max(0.01, 0.01*lo) {
		mid := (lo + hi) / 2
		good, err := ok(mid)
		if err != nil {
			return 0, false, err
		}
		if good {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, false, nil
}

// InstanceGoodput is the goodput of one engine configured by cfg on the
// workload wl: the highest rate up to hi whose attainment of slo reaches target.
func InstanceGoodput(cfg Config, wl Workload, slo SLO, target, hi float64) (rate float64, saturated bool, err error) {
	return InstanceGoodputOn(cfg, wl, slo, target, hi, nil)
}

// InstanceGoodputOn is InstanceGoodput with its runs on sc's memory (nil:
// their own), as RunOn is Run.
func InstanceGoodputOn(cfg Config, wl Workload, slo SLO, target, hi float64, sc *Scratch) (rate float64, saturated bool, err error) {
	if err := checkSearch(target, hi); err != nil {
		return 0, false, err
	}
	run := sc.runScratch() // each run's results are read before the next
	return bisect(func(rate float64) (bool, error) {
		reqs, err := wl(rate)
		if err != nil {
			return false, err
		}
		return attains(cfg, reqs, run, slo, target)
	}, hi)
}

// attains reports whether a run of reqs attains target: Attainment(Run's
// results, slo) >= target. The run ends as soon as too many requests have
// surely missed the objective for the rest to make up the target, or
// enough have surely met it for the rest not to matter.
func attains(cfg Config, reqs []Request, sc *scratch, slo SLO, target float64) (bool, error) {
	e, out, err := startRun(cfg, reqs, sc)
	if err != nil {
		return false, err
	}
	w := missWatch{e: e, slo: slo, budget: missBudget(len(e.all), target)}
	if slo.TTFT > 0 || slo.TPOT > 0 {
		e.runOut(out, w.decided)
		if w.out || w.in {
			return w.in, nil
		}
	} else {
		e.runOut(out, nil)
	}
	if len(e.all) == 0 {
		return Attainment(nil, slo) >= target, nil
	}
	e.settleAll()
	met := 0
	var r Result
	for _, s := range e.all {
		e.result(s, &r)
		if slo.Met(&r) {
			met++
		}
	}
	return float64(met)/float64(len(e.all)) >= target, nil // as Attainment
}

// missWatch follows a run's requests in submission order. Past its TTFT
// deadline, a request without a first token gets it at the end of a later
// step, so it surely misses; so does one rejected or whose first token came
// late. Of the rest, one that has finished is judged as Attainment judges
// it (a finished request changes no more): that is how a run above the
// knee, which misses on TPOT, is seen to fail before its end. Once so many
// missed that the attainment cannot reach the target, or so many met the
// objective that it is reached whatever the rest do, the run's answer is
// known.
type missWatch struct {
	e      *Engine
	slo    SLO
	budget int // the most misses that still attain the target
	next   int // e.all[next:] are not yet past their TTFT deadline
	judged int // e.all[:judged] are counted (each at most once)
	missed int
	met    int
	out    bool // the target cannot be reached
	in     bool // the target is reached
}

// missBudget is the most of n requests that may miss while the attainment,
// computed as Attainment computes it, still reaches target (in (0, 1]).
func missBudget(n int, target float64) int {
	lo, hi := 0, n // float64(n-lo)/float64(n) >= target holds at lo = 0
	for lo < hi {
		m := (lo + hi + 1) / 2
		if float64(n-m)/float64(n) >= target {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// decided moves the watch to the engine's clock and reports whether the
// run's answer is known (out or in).
func (w *missWatch) decided() bool {
	e := w.e
	lat := e.cfg.Step.Physics.ReqLatency
	// lateFirst reports whether s, past its TTFT deadline, surely misses it.
	lateFirst := func(s *Seq) bool {
		arrival := s.Req.Arrival - lat // as the result has it
		return s.rejected || s.cancelled || s.generated == 0 || !(s.first-arrival <= w.slo.TTFT)
	}
	if w.slo.TTFT > 0 {
		for ; w.next < len(e.all); w.next++ {
			s := e.all[w.next]
			if !(e.now-(s.Req.Arrival-lat) > w.slo.TTFT) {
				break // (requests arrive in order; one out of order only holds the watch back)
			}
			if lateFirst(s) {
				w.missed++
			} else if w.slo.TPOT <= 0 && s.done {
				w.met++ // its first token came in time, and it is complete: met
			}
		}
	} else {
		w.next = len(e.all) // no TTFT deadline: every request is judged when it ends
	}
	if w.slo.TPOT > 0 {
		var r Result
		for ; w.judged < w.next; w.judged++ {
			s := e.all[w.judged]
			if w.slo.TTFT > 0 && lateFirst(s) {
				continue // counted above
			}
			if !s.rejected && !s.cancelled && !s.done {
				break // still running: judged when it ends (it holds those after it back)
			}
			if e.result(s, &r); !w.slo.Met(&r) {
				w.missed++
			} else {
				w.met++
			}
		}
	}
	w.out = w.missed > w.budget
	w.in = w.met >= len(e.all)-w.budget
	return w.out || w.in
}
