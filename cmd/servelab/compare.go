package main

import (
	"errors"
	"flag"
	"io"

	"servelab/cmd/internal/labclient"
	"servelab/sim"
)

func init() {
	register(command{name: "compare", summary: "print saved lab runs side by side (files from run.py or servelab measure)", run: runCompare})
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
		m, err := readMeasuredFile(p)
		if err != nil {
			return err
		}
		runs = append(runs, m.Summary)
	}
	labclient.Compare(stdout, runs)
	return nil
}
