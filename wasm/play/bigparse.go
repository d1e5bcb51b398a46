package play

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"servelab/sim"
	"servelab/sim/results"
)

// ParseMeasuredSliced is ParseMeasured for a large file, read in slices:
// a lab JSON with its gaps decoded one at a time, a benchmark tool's file
// by results.ReadSliced. It calls yield (with the fraction done) every
// few milliseconds so that the caller can let the browser draw, and stops
// with yield's error. Its overlay and its errors are ParseMeasured's.
func ParseMeasuredSliced(name string, data []byte, yield func(float64) error) (*Overlay, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return parseBenchSliced(name, data, yield)
	}
	skel := map[string]json.RawMessage{}
	// A gap takes about 45 bytes of JSON: one allocation, not a growing
	// slice's copies (each growth of the wasm heap can hold the page).
	gaps := make([]sim.Gap, 0, len(data)/40)
	last := time.Now()
	tick := func() error {
		if time.Since(last) < 10*time.Millisecond {
			return nil
		}
		last = time.Now()
		return yield(float64(dec.InputOffset()) / float64(len(data)))
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return parseBenchSliced(name, data, yield) // its error names the problem
		}
		key, _ := t.(string)
		if !labKeys[key] {
			return parseBenchSliced(name, data, yield) // not the lab's: a tool's file
		}
		if key != "gaps" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return parseBenchSliced(name, data, yield)
			}
			skel[key] = raw
			if err := tick(); err != nil {
				return nil, err
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			if t == nil && err == nil {
				continue // "gaps": null
			}
			return parseBenchSliced(name, data, yield)
		}
		for i := 0; dec.More(); i++ {
			var g sim.Gap
			if err := dec.Decode(&g); err != nil {
				var se *json.SyntaxError
				if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
					return parseBenchSliced(name, data, yield) // the file is broken: worded as the whole reader words it
				}
				return nil, fmt.Errorf("%s: gaps[%d]: %v", name, i, err)
			}
			if !(g.Gap >= 0 && g.Gap <= results.MaxSeconds) || math.IsNaN(g.TRelInject) || math.Abs(g.TRelInject) > results.MaxSeconds {
				return nil, fmt.Errorf("%s: gaps[%d]: must be seconds in [0, %g], got gap %g at %g", name, i, results.MaxSeconds, g.Gap, g.TRelInject)
			}
			gaps = append(gaps, g)
			if i&1023 == 0 {
				if err := tick(); err != nil {
					return nil, err
				}
			}
		}
		if _, err := dec.Token(); err != nil { // ]
			return parseBenchSliced(name, data, yield)
		}
	}
	if _, err := dec.Token(); err != nil || dec.More() {
		return parseBenchSliced(name, data, yield) // JSON Lines, or a broken file: its error says so
	}
	if _, ok := skel["summary"]; !ok {
		return parseBenchSliced(name, data, yield)
	}
	// The rest is small: the ordinary reader checks it.
	skel["gaps"] = json.RawMessage("[]")
	small, err := json.Marshal(skel)
	if err != nil {
		return nil, err
	}
	o, err := ParseMeasured(name, small)
	if err != nil {
		return nil, err
	}
	o.Gaps = gaps
	return withIndex(o, yield)
}

// labKeys are the keys of a lab JSON (run.py's and servelab measure's).
var labKeys = map[string]bool{"config": true, "summary": true, "gaps": true, "servelab": true}

// parseBenchSliced is ParseMeasured of a benchmark tool's file, read in
// slices: the file, then the run's timeline and figures.
func parseBenchSliced(name string, data []byte, yield func(float64) error) (*Overlay, error) {
	var stop error
	phase := func(lo, span float64) results.Tick {
		return func(f float64) error {
			if err := yield(lo + span*f); err != nil {
				stop = err
				return err
			}
			return nil
		}
	}
	res, err := results.ReadSliced(name, data, phase(0, 0.75))
	if stop != nil {
		return nil, stop
	}
	if err != nil {
		if res.NotObject != nil && !res.Known {
			return nil, errorf("meas.notjson", name, res.NotObject)
		}
		if res.Format != nil && res.Format.Name == "lab" {
			return ParseMeasured(name, data) // a lab file with keys of its own: the lab's reader says what it makes of it
		}
		return nil, errorf("meas.neither", name, err)
	}
	b := res.Runs[0]
	gaps, err := b.Timeline(phase(0.75, 0.1))
	if err != nil {
		return nil, err
	}
	figs, err := b.Figures(phase(0.85, 0.15))
	if err != nil {
		return nil, err
	}
	o := &Overlay{Name: name, Kind: b.Tool, Bench: b, Gaps: gaps, Runs: len(res.Runs), VLLM: res.VLLM}
	o.setFigures(figs)
	return withIndex(o, yield)
}

// withIndex is o with its gaps' index (for the redraws) made in yield's
// slices too: the first redraw after the file lands would make it at once.
func withIndex(o *Overlay, yield func(float64) error) (*Overlay, error) {
	pace := Paced(yield)
	if err := o.indexGaps(func() error { return pace(1) }); err != nil {
		return nil, err
	}
	return o, nil
}

// Paced is yield called at most every 10 ms of work: a yield lets the
// browser draw, and each costs a few milliseconds, so the work between
// them is what keeps the page answering.
func Paced(yield func(float64) error) func(float64) error {
	last := time.Now()
	return func(f float64) error {
		if time.Since(last) < 10*time.Millisecond {
			return nil
		}
		err := yield(f)
		last = time.Now()
		return err
	}
}

// ReadTraceSliced is SetTrace's reading of a large trace, in slices
// (yield as for ParseMeasuredSliced); UseTrace then makes it the page's.
func ReadTraceSliced(name string, data []byte, yield func(float64) error) ([]sim.Request, error) {
	reqs, err := results.ReadTrace(name, data, 0, yield)
	if err == nil && len(reqs) == 0 {
		err = fmt.Errorf("%s holds no requests", name)
	}
	return reqs, err
}

// IsBigTrace is IsTrace for a large file: a JSON Lines file whose first
// line is longer than a trace line may be (sim refuses lines over 4 MiB)
// is not read as a trace, so its first line is not decoded whole.
func IsBigTrace(name string, data []byte) bool {
	if strings.HasSuffix(strings.ToLower(name), ".jsonl") {
		line, _, _ := bytes.Cut(bytes.TrimSpace(data), []byte("\n"))
		if len(line) > 4<<20 {
			return false
		}
	}
	return IsTrace(name, data)
}
