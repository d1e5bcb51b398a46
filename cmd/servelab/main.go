// Command servelab is the native side of the playground: the lecture's demos
// in the terminal, one-off simulations, and (see the other files) the lab
// companion. Each subcommand lives in its own file; the table commands lists them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
)

// command is one subcommand: its name, a one-line summary and its entry point.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// commands is every subcommand, in the order usage lists them; each lives
// in its own file. (A function, not a variable: fidelity runs subcommands,
// so a table variable would refer to itself.)
func commands() []command {
	return []command{
		command{name: "step", summary: "price one iteration: decode batch, context, optional prefill", run: runStep},
		command{name: "sim", summary: "simulate a workload (Poisson, the lab's closed loop, or a trace) and print latency figures", run: runSim},
		command{name: "goodput", summary: "the highest rate whose SLO attainment reaches the target (bisection)", run: runGoodput},
		command{name: "demo", summary: "the interference lecture's four demos, computed (demo interference)", run: runDemo},
		command{name: "models", summary: "list the model and GPU catalogues", run: runModels},
		command{name: "compare", summary: "print saved runs side by side (run.py, servelab measure, vllm bench, GuideLLM, AIPerf, GenAI-Perf, SGLang bench_serving, llmperf)", run: runCompare},
		command{name: "calibrate", summary: "fit the step model's constants to measured runs (run.py, servelab measure, vllm bench --save-detailed)", run: runCalibrate},
		command{name: "fidelity", summary: "the step model's profiles against published measurements (make fidelity); --fit refits a profile", run: runFidelity},
		command{name: "labserver", summary: "a simulated OpenAI-compatible lab server whose streams share one real-time engine", run: untilSignal(labServerUntil)},
		command{name: "measure", summary: "measure a lab server's ITL spike from a long prefill (a port of the lab's run.py)", run: runMeasure},
		command{name: "serve", summary: "the playground and its live lab companion on http://127.0.0.1 (embedded lab servers unless --lab)", run: untilSignal(serveUntil)},
		command{name: "gguf", summary: "write the tiny lab's model: a small Llama GGUF with seeded random weights", run: runGGUF},
	}
}

// lookup finds a subcommand by name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// untilSignal runs a long-lived subcommand until Ctrl-C or SIGTERM.
func untilSignal(f func(ctx context.Context, args []string, stdout, stderr io.Writer) error) func([]string, io.Writer, io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return f(ctx, args, stdout, stderr)
	}
}

// errUsage marks an error already explained by the flag package's usage output.
var errUsage = errors.New("usage")

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// tuneGC lets the heap grow 4x before collecting: simulations make short-lived
// garbage by the megabyte, and a batch command has memory to spare
// (the demo runs about a third faster).
func tuneGC() { debug.SetGCPercent(400) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "servelab: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if !errors.Is(err, errUsage) {
			fmt.Fprintf(stderr, "servelab %s: %v\n", c.name, err)
		}
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "servelab — a teaching playground for LLM serving\n\nUsage: servelab <command> [flags]   (servelab <command> --help for its flags)\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
}

// newFlags makes a FlagSet whose errors and help go to stderr, with a usage
// line naming the subcommand.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: servelab %s %s\n\nFlags:\n", name, synopsis)
		printDefaults(fs, stderr)
	}
	return fs
}

// printDefaults is flag.PrintDefaults, naming a knob flag's type as the
// flag package names its own (int, float, string) rather than "value".
func printDefaults(fs *flag.FlagSet, w io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if t, ok := f.Value.(interface{ TypeName() string }); ok {
			name = t.TypeName()
		}
		line := "  -" + f.Name
		if name != "" {
			line += " " + name
		}
		if len(line) <= 4 { // a one-letter flag fits on the line, as the flag package puts it
			line += "\t"
		} else {
			line += "\n    \t"
		}
		line += strings.ReplaceAll(usage, "\n", "\n    \t")
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			if name == "string" {
				line += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				line += fmt.Sprintf(" (default %v)", f.DefValue)
			}
		}
		fmt.Fprintln(w, line)
	})
}

// parse parses flags and rejects stray positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}
