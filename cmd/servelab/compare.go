package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"servelab/cmd/internal/labclient"
	"servelab/sim"
	"servelab/sim/lab"
	"servelab/sim/results"
)

func runCompare(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", "A.json B.json [more ...] (or one benchmark tool's file)", stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return errCompareArgs
	}
	var labs []lab.Summary
	var benches []*results.Run
	labFiles := 0
	for _, p := range fs.Args() {
		data, err := readBounded(p)
		if err != nil {
			return err
		}
		if fs.NArg() == 1 && isMeasuredJSON(data) {
			fs.Usage() // one lab file has nothing to be compared with
			return errCompareArgs
		}
		if !isMeasuredJSON(data) {
			runs, err := readBenchFile(p, data)
			if err != nil {
				return err
			}
			benches = append(benches, runs...)
			for _, r := range runs {
				if s, ok := benchLabSummary(r); ok {
					labs = append(labs, s)
				}
			}
			continue
		}
		m, err := lab.Read(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		labs = append(labs, m.Summary)
		labFiles++
	}
	if len(labs) < 2 && len(benches) == 0 {
		fs.Usage()
		return errCompareArgs
	}
	// The lab's table (worst gap, long TTFT) when a lab file is among them;
	// benchmark runs with chunk gaps join it there.
	lab := labFiles > 0 && len(labs) >= 2
	if lab {
		labclient.Compare(stdout, labs)
	}
	if len(benches) > 0 {
		if lab {
			fmt.Fprintln(stdout)
		}
		benchTable(stdout, benches, nil)
	}
	return nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, results.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > results.MaxBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, results.MaxBytes)
	}
	return data, nil
}

// isMeasuredJSON reports whether the format table takes data for a lab
// file (run.py's, servelab measure's: one object with "summary").
func isMeasuredJSON(data []byte) bool {
	f, _ := results.Detect(data)
	return f != nil && f.Name == "lab"
}

// readBenchFile reads a benchmark tool's file and, where the tool writes its
// own figures into a file beside it (AIPerf, GenAI-Perf, llmperf), that
// file too, so the figures can be checked against the tool's.
func readBenchFile(path string, data []byte) ([]*results.Run, error) {
	runs, err := results.Read(path, data)
	if err != nil {
		if f, _ := results.Detect(data); f != nil {
			return nil, fmt.Errorf("%s (%s's %s file): %w", path, f.Tool, f.Name, err)
		}
		return nil, fmt.Errorf("%s: neither a measured-JSON file nor a benchmark tool's result: %w", path, err)
	}
	for _, r := range runs {
		c := r.Companion(path)
		if c == "" {
			continue
		}
		cd, err := readBounded(c)
		if err != nil {
			continue // the tool's summary is optional: the per-request file stands alone
		}
		if cs, err := results.Read(c, cd); err == nil && len(cs) == 1 && cs[0].Tool == r.Tool {
			r.Merge(cs[0])
		}
	}
	return runs, nil
}

// benchLabSummary puts a run with chunk gaps in the lab's table: its gaps
// give the ITL columns and its largest the worst gap (it has no injection).
func benchLabSummary(b *results.Run) (lab.Summary, bool) {
	var itl []float64
	for _, r := range b.Requests {
		if r.Error == "" {
			itl = append(itl, r.Gaps...)
		}
	}
	if len(itl) == 0 {
		return lab.Summary{}, false
	}
	s := lab.Summary{Label: b.Label, TokensObserved: len(itl),
		ITLP50: sim.Percentile(itl, 50), ITLP90: sim.Percentile(itl, 90), ITLP99: sim.Percentile(itl, 99), Wall: b.Duration}
	s.ITLMax, s.WorstGap = itl[len(itl)-1], itl[len(itl)-1]
	if b.Duration > 0 {
		s.OutputTokS = float64(len(itl)) / b.Duration
	}
	return s, true
}

// benchTable prints each run's figures, computed from its requests, with the
// file's own figure beside where it states one; sim, when given, adds a
// simulated column.
func benchTable(w io.Writer, runs []*results.Run, simulated map[string]float64) {
	headers := []string{"ms"}
	figs := make([]map[string]float64, len(runs))
	for i, r := range runs {
		headers = append(headers, r.Label)
		figs[i], _ = r.Figures(nil)
	}
	if simulated != nil {
		headers = append(headers, "simulated")
	}
	names := map[string]string{"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL/chunk", "itl_token": "ITL/token", "e2e": "E2E"}
	var rows [][]string
	for _, f := range results.FigureNames {
		for _, p := range []string{"p50", "p90", "p99"} {
			k := f + "_" + p
			row := []string{names[f] + " " + p}
			any := false
			for i, r := range runs {
				cell := "-"
				if v, ok := figs[i][k]; ok {
					cell, any = fmt.Sprintf("%.2f", v*1e3), true
				}
				if v, ok := r.Summary[k]; ok {
					cell += fmt.Sprintf(" (%.2f)", v*1e3)
					any = true
				}
				row = append(row, cell)
			}
			if simulated != nil {
				if v, ok := simulated[k]; ok {
					row, any = append(row, fmt.Sprintf("%.2f", v*1e3)), true
				} else {
					row = append(row, "-")
				}
			}
			if any {
				rows = append(rows, row)
			}
		}
	}
	if len(rows) > 0 { // request traces alone have no figures
		fmt.Fprintln(w, "Benchmark runs, computed from each file's requests (the file's own figure in brackets), ms")
		table(w, headers, rows)
		fmt.Fprintln(w)
	}
	for i, r := range runs {
		failed := ""
		if n := r.Failed(); n > 0 {
			failed = fmt.Sprintf(" (%d failed, left out of the figures)", n)
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s, %d requests%s%s\n", r.Label, r.Format, len(r.Requests), failed, load(r))
		if r.Trace {
			fmt.Fprintf(w, "  trace: arrivals at %.3g req/s", r.AchievedRate())
			if r.BlockTokens > 0 {
				fmt.Fprintf(w, "; %.1f%% of its %d-token prompt blocks repeat an earlier request's (an unbounded prefix cache's hits)", 100*r.BlockShare(), r.BlockTokens)
			}
			fmt.Fprintln(w)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		for _, c := range r.Cannot {
			fmt.Fprintf(w, "  cannot give: %s\n", c)
		}
	}
}

// load says what the run offered.
func load(r *results.Run) string {
	var parts []string
	switch {
	case r.Concurrency > 0:
		parts = append(parts, fmt.Sprintf("concurrency %d", r.Concurrency))
	case math.IsInf(r.Rate, 1):
		parts = append(parts, "all sent at once")
	case r.Rate > 0:
		parts = append(parts, fmt.Sprintf("%.3g req/s asked", r.Rate))
	}
	if r.Duration > 0 {
		parts = append(parts, fmt.Sprintf("%.2f s", r.Duration))
	}
	p, o := r.MeanLengths()
	if p > 0 {
		parts = append(parts, fmt.Sprintf("mean %.0f prompt tokens", p))
	}
	if o > 0 {
		parts = append(parts, fmt.Sprintf("mean %.0f output tokens", o))
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}
