package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"servelab/cmd/internal/labclient"
	"servelab/sim"
)

func init() {
	register(command{name: "compare", summary: "print saved lab runs side by side (files from run.py, servelab measure or vllm bench serve)", run: runCompare})
}

func runCompare(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", "A.json B.json [more.json ...]", stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() < 2 {
		fs.Usage()
		return errCompareArgs
	}
	var runs []sim.LabSummary
	for _, p := range fs.Args() {
		s, err := readSummary(p)
		if err != nil {
			return err
		}
		runs = append(runs, s)
	}
	labclient.Compare(stdout, runs)
	return nil
}

// readSummary reads a measured-JSON file, or failing that a `vllm bench
// serve --save-result --save-detailed` file, whose ITLs give the ITL
// columns and whose largest gap is the worst gap (it has no injection).
func readSummary(path string) (sim.LabSummary, error) {
	m, err := readMeasuredFile(path)
	if err == nil {
		return m.Summary, nil
	}
	if !strings.Contains(err.Error(), "summary: missing") {
		return sim.LabSummary{}, err
	}
	f, ferr := os.Open(path)
	if ferr != nil {
		return sim.LabSummary{}, ferr
	}
	defer f.Close()
	b, verr := sim.ReadVLLMBench(f)
	if verr != nil {
		return sim.LabSummary{}, fmt.Errorf("%s: neither a measured-JSON file (%v) nor a vLLM bench result (%v)", path, err, verr)
	}
	itl := b.AllITLs()
	if len(itl) == 0 {
		return sim.LabSummary{}, fmt.Errorf("%s: the vLLM result has no inter-token gaps", path)
	}
	s := sim.LabSummary{Label: strings.TrimSuffix(filepath.Base(path), ".json"), TokensObserved: len(itl),
		ITLP50: sim.Percentile(itl, 50), ITLP90: sim.Percentile(itl, 90), ITLP99: sim.Percentile(itl, 99), Wall: b.Duration}
	s.ITLMax, s.WorstGap = itl[len(itl)-1], itl[len(itl)-1]
	if b.Duration > 0 {
		s.OutputTokS = float64(len(itl)) / b.Duration
	}
	return s, nil
}
