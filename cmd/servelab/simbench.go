package main

// `servelab sim --like FILE` where FILE is a benchmark tool's result: the
// simulation takes the file's lengths and its rate or concurrency, and the
// measured, stated and simulated figures are printed side by side.

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"servelab/sim"
	"servelab/sim/results"
	"servelab/sim/scenario"
)

// benchLike reads --like's file when it is a benchmark tool's result (nil
// when it is a lab measured-JSON file). PATH#N picks run N of a file with
// several (a GuideLLM sweep, SGLang's appended lines).
func benchLike(like string) (*results.Run, string, error) {
	path, pick := like, 0
	if i := strings.LastIndex(like, "#"); i > 0 {
		if n, err := strconv.Atoi(like[i+1:]); err == nil {
			path, pick = like[:i], n
		}
	}
	data, err := readBounded(path)
	if err != nil {
		return nil, "", fmt.Errorf("--like: %w", err)
	}
	if isMeasuredJSON(data) {
		return nil, "", nil
	}
	runs, err := readBenchFile(path, data)
	if err != nil {
		return nil, "", fmt.Errorf("--like %w", err)
	}
	switch {
	case pick == 0 && len(runs) > 1:
		return runs[0], fmt.Sprintf("the file holds %d runs; simulating the first (--like %s#N picks run N)", len(runs), path), nil
	case pick == 0:
		return runs[0], "", nil
	case pick < 1 || pick > len(runs):
		return nil, "", fmt.Errorf("--like %s: run %d asked, the file holds %d", like, pick, len(runs))
	}
	return runs[pick-1], "", nil
}

// simulatedFigures keys the simulation's summary as results.Run.Figures does;
// the simulator's gaps are per token.
func simulatedFigures(s sim.Summary) map[string]float64 {
	f := map[string]float64{
		"ttft_p50": s.TTFTP50, "ttft_p90": s.TTFTP90, "ttft_p99": s.TTFTP99,
		"tpot_p50": s.TPOTP50, "tpot_p90": s.TPOTP90, "tpot_p99": s.TPOTP99,
		"e2e_p50": s.E2EP50, "e2e_p90": s.E2EP90, "e2e_p99": s.E2EP99,
	}
	if s.ITLP50 > 0 {
		f["itl_token_p50"], f["itl_token_p90"], f["itl_token_p99"] = s.ITLP50, s.ITLP90, s.ITLP99
	}
	return f
}

type benchLikeJSON struct {
	Run       string             `json:"run"`
	Tool      string             `json:"tool"`
	Format    string             `json:"format"`
	Workload  string             `json:"workload"`
	Requests  int                `json:"requests"`
	Measured  map[string]float64 `json:"measured"`
	File      map[string]float64 `json:"file"`
	Simulated map[string]float64 `json:"simulated"`
	Cannot    []string           `json:"cannot,omitempty"`
	Notes     []string           `json:"notes,omitempty"`
}

func runBenchLike(b *results.Run, note string, ef *expFlags, step sim.StepModel, asJSON bool, stdout io.Writer) error {
	if ef.x.Policy == scenario.Disaggregated {
		return fmt.Errorf("--like with a benchmark file runs on one engine; --policy disaggregated takes Poisson arrivals or a --trace")
	}
	w, err := b.Workload(ef.x.Prompt, ef.x.Output, ef.x.Seed)
	if err != nil {
		return fmt.Errorf("--like %s: %w", b.Label, err)
	}
	cfg, err := ef.config(step)
	if err != nil {
		return err
	}
	cfg.RecordTokens = true
	out, err := results.Simulate(cfg, w)
	if err != nil {
		return err
	}
	simFigs := simulatedFigures(sim.Summarize(out.Results))
	notes := append([]string(nil), w.Notes...)
	if note != "" {
		notes = append(notes, note)
	}
	if asJSON {
		measured, _ := b.Figures(nil)
		return writeJSON(stdout, benchLikeJSON{Run: b.Label, Tool: b.Tool, Format: b.Format, Workload: w.Kind,
			Requests: len(w.Requests), Measured: measured, File: b.Summary, Simulated: simFigs,
			Cannot: b.Cannot, Notes: append(append([]string(nil), b.Notes...), notes...)})
	}
	how := map[string]string{"replay": "its start times replayed", "poisson": "Poisson arrivals at its rate",
		"burst": "all sent at once, as it sent them", "closed": fmt.Sprintf("a closed loop of %d in flight", w.Concurrency)}[w.Kind]
	fmt.Fprintf(stdout, "Simulated %s (%s): %d requests of the file's lengths, %s; %s, %s on %s\n\n",
		b.Label, b.Tool, len(w.Requests), how, cfg.Policy.Name(), step.Model.Name, step.GPU.Name)
	benchTable(stdout, []*results.Run{b}, simFigs)
	for _, n := range notes {
		fmt.Fprintf(stdout, "  simulation: %s\n", n)
	}
	if c := sim.Count(out.Results); c.Rejected > 0 || c.Unfinished > 0 {
		fmt.Fprintf(stdout, "  engine: %s\n", c)
	}
	return nil
}
