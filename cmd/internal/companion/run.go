package companion

import (
	"context"
	"sync"
	"time"

	"servelab/cmd/internal/labclient"
	"servelab/sim"
)

// run is one measurement: its events for replay and live relay, then its result.
type run struct {
	id, label, lab string
	started        time.Time
	finished       chan struct{}
	maxTokens      int // token events kept for replay

	mu       sync.Mutex
	events   []labclient.Event
	tokens   int
	dropped  int
	state    string
	err      string
	measured *sim.Measured
	cancel   context.CancelFunc
}

func newRun(id, label, lab string, maxTokens int) *run {
	return &run{id: id, label: label, lab: lab, started: time.Now(), finished: make(chan struct{}),
		maxTokens: maxTokens, state: "running"}
}

// add records an event (the measurement's Observer): cheap, under a lock.
func (r *run) add(e labclient.Event) {
	r.mu.Lock()
	if e.Type == "token" {
		if r.tokens >= r.maxTokens {
			r.dropped++ // the run's JSON still has every frame
			r.mu.Unlock()
			return
		}
		r.tokens++
	}
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// since returns the events from index i on, whether the run is over, and
// (when it is) its state and summary.
func (r *run) since(i int) ([]labclient.Event, bool, runInfo, *sim.LabSummary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.events[min(i, len(r.events)):]
	done := r.state != "running"
	var sum *sim.LabSummary
	if done && r.measured != nil {
		s := r.measured.Summary
		sum = &s
	}
	return evs, done, r.infoLocked(), sum
}

// stop cancels a running measurement; false when it is not running.
func (r *run) stop() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != "running" || r.cancel == nil {
		return false
	}
	r.cancel()
	return true
}

func (r *run) finish(state, err string, m *sim.Measured) {
	r.mu.Lock()
	r.state, r.err, r.measured = state, err, m
	r.mu.Unlock()
}

func (r *run) info() runInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.infoLocked()
}

func (r *run) infoLocked() runInfo {
	i := runInfo{ID: r.id, Label: r.label, Lab: r.lab, State: r.state, Started: r.started.UTC(), Error: r.err}
	if r.measured != nil {
		s := r.measured.Summary
		i.Summary = &s
	}
	return i
}

func (r *run) result() (runInfo, *sim.Measured) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.infoLocked(), r.measured
}
