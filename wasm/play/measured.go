//go:build js && wasm

package play

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"servelab/sim"
)

// Overlay is a measured run laid over the simulation: the lab's gaps on the
// simulation's clock, or a vLLM bench result's latency figures.
type Overlay struct {
	Name    string
	Kind    string // "lab" or "vllm"
	Gaps    []sim.Gap
	Origin  float64 // simulated time of the measured run's injection (gap times are relative to it)
	Lab     *sim.LabSummary
	Config  *sim.LabConfig
	VLLM    *sim.VLLMBench
	VLLMFig [3][3]float64 // TTFT, TPOT, ITL x P50, P90, P99
}

// ParseMeasured reads an uploaded file: a lab JSON (run.py or servelab
// measure) or a vLLM bench result. Errors say what is wrong with it.
func ParseMeasured(name string, data []byte) (*Overlay, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM, as the readers take it
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %v", name, err)
	}
	if _, ok := probe["summary"]; ok {
		m, err := sim.ReadMeasured(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if m.Summary.Error != "" {
			return nil, fmt.Errorf("%s: the run recorded no tokens (%s)", name, m.Summary.Error)
		}
		o := &Overlay{Name: name, Kind: "lab", Gaps: m.Gaps, Lab: &m.Summary}
		if _, ok := probe["config"]; ok {
			c := m.Config
			o.Config = &c
		}
		return o, nil
	}
	if _, ok := probe["itls"]; ok {
		b, err := sim.ReadVLLMBench(bytes.NewReader(data)) // bounds each gap, so the sums below stay finite
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		o := &Overlay{Name: name, Kind: "vllm", VLLM: b}
		var tpot []float64
		for i, xs := range b.ITLs {
			if (i < len(b.Errors) && b.Errors[i] != "") || len(xs) == 0 {
				continue
			}
			s := 0.0
			for _, x := range xs {
				s += x
			}
			tpot = append(tpot, s/float64(len(xs)))
		}
		ttft := append([]float64(nil), b.TTFTs...)
		itl := b.AllITLs()
		for i, xs := range [][]float64{ttft, tpot, itl} {
			for j, p := range []float64{50, 90, 99} {
				o.VLLMFig[i][j] = sim.Percentile(xs, p)
			}
		}
		return o, nil
	}
	keys := make([]string, 0, len(probe))
	for k := range probe {
		keys = append(keys, k)
	}
	return nil, fmt.Errorf("%s is neither a lab JSON (needs \"summary\" and \"gaps\") nor a vLLM bench result (needs \"itls\"); it has keys: %s", name, strings.Join(keys, ", "))
}

// ApplyConfig sets the simulation up as the measured run was: the lab's
// closed loop with its knobs, or a Poisson run of the bench's mean lengths.
func (o *Overlay) ApplyConfig(s *State) []string {
	var notes []string
	set := func(k string, v float64) {
		if n := s.set(k, v); n != "" {
			notes = append(notes, n)
		}
	}
	switch o.Kind {
	case "lab":
		s.Workload = "lab"
		if s.Policy == "disagg" {
			s.Policy = "chunked"
		}
		c := sim.DefaultLabConfig()
		if o.Config != nil {
			c = *o.Config
		}
		set("streams", float64(c.ShortConcurrency))
		set("prompt", float64(c.ShortInputLen))
		set("output", float64(c.ShortOutputLen))
		set("long", float64(c.LongInputLen))
		set("longout", float64(c.LongOutputLen))
		set("duration", float64(c.Duration))
		set("inject", float64(c.InjectAfter))
		set("t0", math.Max(0, c.InjectAfter-0.5))
		set("span", 3)
	case "vllm":
		b := o.VLLM
		s.Workload = "poisson"
		mean := func(xs []int) float64 {
			if len(xs) == 0 {
				return 0
			}
			t := 0
			for _, x := range xs {
				t += x
			}
			return float64(t) / float64(len(xs))
		}
		if p := mean(b.InputLens); p > 0 {
			set("prompt", math.Round(p))
		}
		if p := mean(b.OutputLens); p > 0 {
			set("output", math.Round(p))
		}
		if n := len(b.ITLs); n > 0 {
			set("n", float64(n))
			if b.Duration > 0 {
				set("rate", float64(n)/b.Duration)
			}
		}
	}
	return notes
}
