package sim

// A lab run's record: the token arrivals and requests the lab's closed loop
// (simulated here, measured by servelab measure or run.py) gives, the
// windows its analysis rests on and the gaps counted in each. Package
// sim/lab turns them into run.py's summary and file.

import "math"

// Arrival is one timed token frame of a short stream after that stream's
// first: T is when it arrived (seconds, on the same clock as LabRun.Inject;
// any origin) and Gap the seconds since the same stream's previous frame.
type Arrival struct {
	T   float64 `json:"t"`
	Gap float64 `json:"gap"`
}

// StreamResult is one streamed request as a client saw it (run.py's
// per-request dict). TTFT is seconds from sending to the first content
// frame; Latency to the end of the stream.
type StreamResult struct {
	OK      bool    `json:"ok"`
	TTFT    float64 `json:"ttft"`
	Latency float64 `json:"latency"`
	Chunks  int     `json:"chunks"`           // frames that carried output
	Tokens  int     `json:"tokens,omitempty"` // output tokens (server's usage when sent, else Chunks)
	Error   string  `json:"error,omitempty"`
}

// Gap is one entry of the measured JSON's "gaps": an Arrival with its time
// taken relative to the injection.
type Gap struct {
	TRelInject float64 `json:"t_rel_inject"`
	Gap        float64 `json:"gap"`
}

// LabRun is the input of the lab analysis: everything run.py's summarise
// reads (package sim/lab summarises it). A simulated lab workload builds
// one from engine results just as the measuring client builds one from the wire.
type LabRun struct {
	Label            string         // run name (--label)
	BaseURL          string         // server measured
	ShortConcurrency int            // short streams kept in flight
	LongInputLen     int            // long prompt length asked for
	Inject           float64        // when the long prompt(s) were sent, on the Arrivals' clock
	Arrivals         []Arrival      // every short-stream frame after each stream's first, any order
	Long             []StreamResult // the injected long requests, in completion order
	Short            []StreamResult // every short request of the timed run
	Wall             float64        // seconds from the start of load to the end of the last request
}

// Window returns what the lab analysis's windows rest on: the TTFT of the
// first long request that succeeded (0: none did), the long requests that
// failed, and the end of the during window (+Inf when none succeeded).
// Quiet is before Inject, during from Inject to the end (inclusive),
// after the rest.
func (r LabRun) Window() (ttft float64, bad []StreamResult, end float64) {
	haveOK := false
	for _, l := range r.Long {
		if l.OK {
			if !haveOK {
				ttft, haveOK = l.TTFT, true
			}
		} else {
			bad = append(bad, l)
		}
	}
	end = math.Inf(1)
	if ttft != 0 {
		end = r.Inject + ttft
	}
	return ttft, bad, end
}

// LabCounts is the lab analysis's pass over the arrivals in (time, gap)
// order: the gaps counted by value in each window (the whole run is the
// three together), merging repeats in a row (one step's streams share a
// gap), so that GapPercentiles gives Percentile's figures without sorting
// every gap; the worst gap (the first maximum, as Python's max); and how
// many arrivals were counted. Package sim/lab makes run.py's summary of it.
type LabCounts struct {
	Quiet, During, After []GapCount
	Worst                Arrival
	N                    int
}

// Window returns the counts an arrival at t goes to: before the
// injection, until the window's end (inclusive), or after.
func (c *LabCounts) Window(t, inject, end float64) *[]GapCount {
	switch {
	case t < inject:
		return &c.Quiet
	case t <= end:
		return &c.During
	}
	return &c.After
}

// Add counts n arrivals of a's gap, a the first of them, in win.
func (c *LabCounts) Add(a Arrival, n int, win *[]GapCount) {
	if c.N == 0 || a.Gap > c.Worst.Gap {
		c.Worst = a // strictly greater: the first maximum wins, as Python's max
	}
	c.N += n
	*win = addGaps(*win, a.Gap, n)
}

// addGaps counts n gaps of g.
func addGaps(cs []GapCount, g float64, n int) []GapCount {
	if k := len(cs); k > 0 && cs[k-1].Gap == g {
		cs[k-1].N += n
		return cs
	}
	return append(cs, GapCount{Gap: g, N: n})
}
