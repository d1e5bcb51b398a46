package companion

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"servelab/cmd/internal/labclient"
	"servelab/sim/lab"
)

// run is one measurement: its events for replay and live relay, then its result.
//
// The events are kept encoded, as the SSE messages every subscriber sends,
// in one log shared by all of them: a late subscriber replays the log from
// its start (or from Last-Event-ID) instead of encoding the whole history
// again, so twenty pages watching a long run cost one copy, not twenty.
type run struct {
	id, label, lab string
	started        time.Time
	finished       chan struct{}
	maxTokens      int // token events kept for replay

	mu       sync.Mutex
	pending  []labclient.Event // recorded, not yet in the log
	tokens   int
	dropped  int
	state    string
	err      string
	measured *lab.Measured
	cancel   context.CancelFunc
	log      []byte // the encoded events: only ever appended to
	marks    []mark // where each message of log starts
	encoded  int    // events in log

	enc sync.Mutex // one encoder at a time; held without mu while it encodes
}

// mark is where a message of the log starts: its first event's index and its byte offset.
type mark struct{ event, off int }

// maxBatch bounds the token events in one "tokens" message, so a replay
// goes out in pieces of a few hundred KB.
const maxBatch = 4096

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
	r.pending = append(r.pending, e)
	r.mu.Unlock()
}

// flush encodes the pending events onto the log. The measurement's
// observers wait only for the moment it takes the pending slice.
func (r *run) flush() {
	r.enc.Lock()
	defer r.enc.Unlock()
	r.mu.Lock()
	p, base, off := r.pending, r.encoded, len(r.log)
	r.pending = nil
	r.mu.Unlock()
	if len(p) == 0 {
		return
	}
	b, ms := encodeEvents(nil, nil, p, base, off)
	r.mu.Lock()
	r.log = append(r.log, b...)
	r.marks = append(r.marks, ms...)
	r.encoded += len(p)
	r.mu.Unlock()
}

// offset is where in the log a subscriber resuming at event index next
// starts: the first message beginning at or after it.
func (r *run) offset(next int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, _ := slices.BinarySearchFunc(r.marks, next, func(m mark, n int) int { return m.event - n })
	if i == len(r.marks) {
		return len(r.log)
	}
	return r.marks[i].off
}

// view returns the log from byte off on (shared: read, never written),
// the number of events in the log, whether the run is over with all its
// events in the log, and (when it is) its state and summary.
func (r *run) view(off int) ([]byte, int, bool, runInfo, *lab.Summary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	chunk := r.log[min(off, len(r.log)):len(r.log):len(r.log)]
	done := r.state != "running" && len(r.pending) == 0
	var sum *lab.Summary
	if done && r.measured != nil {
		s := r.measured.Summary
		sum = &s
	}
	return chunk, r.encoded, done, r.infoLocked(), sum
}

// encodeEvents appends evs as SSE messages to b, token events in batches
// and the rest one by one, in order, and a mark per message to ms; evs start
// at event index start, and b is at byte off of the log. Each message's id
// is the index of the event after it (what Last-Event-ID resumes from).
func encodeEvents(b []byte, ms []mark, evs []labclient.Event, start, off int) ([]byte, []mark) {
	from := 0 // the first event of the batch being gathered
	var batch []labclient.Event
	emit := func(event string, v any, first, next int) {
		ms = append(ms, mark{event: start + first, off: off + len(b)})
		b = appendSSE(b, event, v, start+next)
	}
	flushBatch := func(end int) {
		if len(batch) > 0 {
			emit("tokens", batch, from, end)
			batch = batch[:0]
		}
	}
	for i, e := range evs {
		if e.Type == "token" {
			if len(batch) == 0 {
				from = i
			}
			batch = append(batch, e)
			if len(batch) == maxBatch {
				flushBatch(i + 1)
			}
			continue
		}
		flushBatch(i)
		emit(e.Type, e, i, i+1)
	}
	flushBatch(len(evs))
	return b, ms
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

// finish records the outcome. The measurement has returned, so no event
// comes after it: the log is complete once it is flushed.
func (r *run) finish(state, err string, m *lab.Measured) {
	r.flush()
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

func (r *run) result() (runInfo, *lab.Measured) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.infoLocked(), r.measured
}

func appendSSE(b []byte, event string, v any, id int) []byte {
	data, _ := json.Marshal(v)
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, "\nid: "...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
