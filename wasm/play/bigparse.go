//go:build js && wasm

package play

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"servelab/sim"
)

// ParseMeasuredSliced is ParseMeasured for a large file: it reads a large lab JSON with its gaps decoded one at a time,
// calling yield (with the fraction read) every
// few milliseconds so that the caller can let the browser draw, and stopping
// with yield's error; any other file (a benchmark tool's, JSON
// Lines) goes to the ordinary reader (play.ParseMeasured) in one piece,
// which holds the page while it parses.
func ParseMeasuredSliced(name string, data []byte, yield func(float64) error) (*Overlay, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ParseMeasured(name, data)
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
			return ParseMeasured(name, data) // its error names the problem
		}
		key, _ := t.(string)
		if key != "gaps" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return ParseMeasured(name, data)
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
			return ParseMeasured(name, data)
		}
		for i := 0; dec.More(); i++ {
			var g sim.Gap
			if err := dec.Decode(&g); err != nil {
				return nil, fmt.Errorf("%s: gaps[%d]: %v", name, i, err)
			}
			if !(g.Gap >= 0 && g.Gap <= sim.MaxMeasuredSeconds) || math.IsNaN(g.TRelInject) || math.Abs(g.TRelInject) > sim.MaxMeasuredSeconds {
				return nil, fmt.Errorf("%s: gaps[%d]: must be seconds in [0, %g], got gap %g at %g", name, i, sim.MaxMeasuredSeconds, g.Gap, g.TRelInject)
			}
			gaps = append(gaps, g)
			if i&1023 == 0 {
				if err := tick(); err != nil {
					return nil, err
				}
			}
		}
		if _, err := dec.Token(); err != nil { // ]
			return nil, fmt.Errorf("%s: gaps: %v", name, err)
		}
	}
	if _, err := dec.Token(); err != nil || dec.More() {
		return ParseMeasured(name, data) // JSON Lines, or a broken file: its error says so
	}
	if _, ok := skel["summary"]; !ok {
		// A benchmark tool's file: its readers take it whole (not in slices yet).
		return ParseMeasured(name, data)
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
	return o, nil
}
