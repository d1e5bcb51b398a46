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
	if !(target > 0 && target <= 1) {
		return 0, false, fmt.Errorf("attainment target must be in (0, 1], got %g", target)
	}
	if !(hi > 0) || hi > MaxRate {
		return 0, false, fmt.Errorf("search ceiling must be in (0, %g] req/s, got %g", MaxRate, hi)
	}
	ok := func(r float64) (bool, error) {
		a, err := attain(r)
		return a >= target, err
	}
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
	var sc scratch // each run's results are read before the next
	return Goodput(func(rate float64) (float64, error) {
		reqs, err := wl(rate)
		if err != nil {
			return 0, err
		}
		out, err := run(cfg, reqs, &sc)
		if err != nil {
			return 0, err
		}
		return Attainment(out.Results, slo), nil
	}, target, hi)
}
