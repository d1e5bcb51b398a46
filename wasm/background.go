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

// bgRest is how long the settings must rest before the background
// figures start (a drag's input events come a frame apart): the job
// starts then, not at the next frame after, and a newer change that came
// meanwhile cancels it before it does any work.
const bgRest = 40 * time.Millisecond

// errCancelled stops a background job whose settings are stale.
var errCancelled = errors.New("cancelled")

// startBackground computes the latency-vs-rate sweep and the goodput for
// state s from time at without holding up the page: each simulation
// yields to the browser, and a newer change (a new figures generation gen)
// cancels the job. cur is the point of s's own rate, read from the run
// shown (nil: none).
func (a *App) startBackground(s play.State, gen int, at time.Time, cur *play.RatePoint) {
	if a.s.simErr != "" {
		return
	}
	if s.Workload == "lab" || (a.s.run != nil && a.s.run.Truncated) || play.SweepTooBig(s) {
		return // Figures() already says why there is no sweep
	}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				a.post(func() { a.fail("background figures", r) })
			}
		}()
		time.Sleep(time.Until(at)) // the settings' rest
		last := time.Now()
		stale := func() error {
			// Let the browser draw and handle input about every frame, not
			// before every run (see yieldTask).
			if time.Since(last) > yieldSlice {
				yieldTask()
				last = time.Now()
			}
			a.mu.Lock()
			now, pending := a.pub.figGen, a.pub.simPending
			a.mu.Unlock()
			if now != gen || pending {
				return errCancelled
			}
			return nil
		}
		if stale() != nil {
			return
		}
		var pts []play.RatePoint
		for _, rate := range play.RatesFor(s.Rate) {
			if cur != nil && rate == cur.Rate {
				pts = append(pts, *cur) // the run shown is this experiment
				continue
			}
			if stale() != nil {
				return
			}
			sum, att, err := play.AttainmentAt(s, rate, stale)
			if errors.Is(err, errCancelled) {
				return
			}
			if err != nil {
				break
			}
			pts = append(pts, play.RatePoint{Rate: rate, TTFTP90: sum.TTFTP90, TPOTP90: sum.TPOTP90, Attainment: att})
		}
		ptsCopy := pts
		a.postNow("background figures", func() {
			if a.bg.gen == gen {
				a.bg.rates = ptsCopy
				a.renderFigures()
			}
		})
		hi := math.Min(sim.MaxRate, math.Max(400, 4*s.Rate))
		g, saturated, err := play.Goodput(s, hi, stale)
		if errors.Is(err, errCancelled) {
			return
		}
		note := ""
		switch {
		case err != nil:
			note = play.Tf(a.disp.lang, "note.error", err.Error())
		case saturated:
			note = play.Tf(a.disp.lang, "note.saturated", hi)
		}
		a.postNow("background figures", func() {
			if a.bg.gen != gen {
				return
			}
			a.bg.figs.Goodput, a.bg.figs.GoodputNote = g, note
			a.renderFigures()
			// On the page's clock, for the benchmark: both panels are shown.
			a.pg.win.Set("servelabPanelsMs", a.pg.win.Get("performance").Call("now"))
		})
	}()
}

// pickBackground starts the background figures once the settings have rested.
func (a *App) pickBackground() {
	if a.lec != nil && a.lec.pending() {
		return // a chapter's table comes first: they would share the one thread
	}
	if a.bg.pending {
		a.bg.pending = false
		a.publish() // (the background checks the published figures' generation)
		var cur *play.RatePoint
		if r := a.s.run; r != nil && r.State.Query() == a.s.state.Query() {
			cur = &play.RatePoint{Rate: a.s.state.Rate, TTFTP90: r.Summary.TTFTP90, TPOTP90: r.Summary.TPOTP90, Attainment: a.bg.figs.Attainment}
		}
		a.startBackground(a.s.state.Clone(), a.bg.gen, a.bg.at, cur)
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
