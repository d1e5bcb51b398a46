package play

import (
	"fmt"
	"strings"

	"servelab/sim"
	"servelab/sim/scenario"
)

// experiment is s's experiment with what the page holds beside it
// resolved: an uploaded model, profile or trace, named by the state.
func (s State) experiment() (scenario.Experiment, error) {
	x := s.Experiment
	x.Custom, x.Loaded = nil, nil
	if ss := s.Sess; ss != nil {
		for i := range ss.models {
			if ss.models[i].Name == x.Model {
				m := ss.models[i]
				x.Custom = &m
			}
		}
	}
	if x.Custom == nil && strings.Contains(x.Model, "(uploaded)") {
		return x, fmt.Errorf("model %q was uploaded in another page: upload its config.json again", x.Model)
	}
	if p, ok := s.Sess.profileMap()[x.Profile]; ok {
		x.Loaded = p
	}
	if x.Workload == scenario.Trace {
		if s.Sess == nil || s.Sess.trace.reqs == nil {
			return x, fmt.Errorf("the trace workload needs a trace file: upload a CSV or JSONL (arrival, prompt, output) as servelab sim --trace reads")
		}
		x.TraceReqs, x.TraceName = s.Sess.trace.reqs, s.Sess.trace.name
	}
	return x, nil
}

// build is s's experiment built as the CLI builds it (scenario.Build),
// with the page's bound on any one run's steps.
func build(s State) (*scenario.Built, error) {
	x, err := s.experiment()
	if err != nil {
		return nil, err
	}
	b, err := x.Build()
	if err != nil {
		return nil, err
	}
	b.Config.Limits.MaxIterations = MaxIterations
	if b.Cluster != nil {
		b.Cluster.Limits.MaxIterations = MaxIterations
	}
	return b, nil
}

// stepModel builds the step model the state names, with its assumptions.
func stepModel(s State) (sim.StepModel, error) {
	x, err := s.experiment()
	if err != nil {
		return sim.StepModel{}, err
	}
	step, _, err := x.StepModel()
	return step, err
}

// requests is the state's open-loop workload at rate: the uploaded trace,
// or Poisson arrivals with the lengths the state names.
func requests(s State, rate float64) ([]sim.Request, error) {
	x, err := s.experiment()
	if err != nil {
		return nil, err
	}
	return x.RequestsAt(rate)
}
