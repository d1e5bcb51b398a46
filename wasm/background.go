//go:build js && wasm

package main

import (
	"errors"
	"math"
	"runtime/metrics"
	"servelab/sim"
	"servelab/wasm/play"
	"time"
)

// errCancelled stops a background job whose settings are stale.
var errCancelled = errors.New("cancelled")

// startBackground computes the latency-vs-rate sweep and the goodput for
// state s without holding up the page: each simulation yields to the
// browser, and a newer change cancels the job.
func (a *App) startBackground(s play.State, gen int) {
	if a.simErr != "" {
		return
	}
	if s.Workload == "lab" || (a.run != nil && a.run.Truncated) || play.SweepTooBig(s) {
		return // Figures() already says why there is no sweep
	}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				a.post(func() { a.fail("background figures", r) })
			}
		}()
		stale := func() error {
			time.Sleep(time.Millisecond) // let the browser draw and handle input
			a.mu.Lock()
			cur, pending := a.pub.gen, a.pub.simPending
			a.mu.Unlock()
			if cur != gen || pending {
				return errCancelled
			}
			return nil
		}
		var pts []play.RatePoint
		for _, rate := range play.RatesFor(s.F("rate")) {
			if stale() != nil {
				return
			}
			sum, att, err := play.AttainmentAt(s, rate)
			if err != nil {
				break
			}
			pts = append(pts, play.RatePoint{Rate: rate, TTFTP90: sum.TTFTP90, TPOTP90: sum.TPOTP90, Attainment: att})
		}
		ptsCopy := pts
		a.post(func() {
			if a.gen == gen {
				a.rates = ptsCopy
				a.render()
				a.publish()
			}
		})
		hi := math.Min(sim.MaxRate, math.Max(400, 4*s.F("rate")))
		g, saturated, err := sim.Goodput(func(rate float64) (float64, error) {
			if err := stale(); err != nil {
				return 0, err
			}
			_, att, err := play.AttainmentAt(s, rate)
			return att, err
		}, 0.9, hi)
		if errors.Is(err, errCancelled) {
			return
		}
		note := ""
		switch {
		case err != nil:
			note = play.Tf(a.lang, "note.error", err.Error())
		case saturated:
			note = play.Tf(a.lang, "note.saturated", hi)
		}
		a.post(func() {
			if a.gen != gen {
				return
			}
			a.figs.Goodput, a.figs.GoodputNote = g, note
			a.render()
			a.publish()
		})
	}()
}

// pickBackground starts the background figures once the settings have rested.
func (a *App) pickBackground() {
	if a.bgPending && time.Now().After(a.bgAt) {
		a.bgPending = false
		a.startBackground(a.state.Clone(), a.gen)
	}
}

var gcSample = []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}

// gcCycles is how many collections have run (for the benchmark's notes).
func gcCycles() float64 {
	metrics.Read(gcSample)
	if gcSample[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return float64(gcSample[0].Value.Uint64())
}
