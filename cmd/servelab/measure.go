package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"servelab/cmd/internal/labclient"
	"servelab/sim/lab"
)

func runMeasure(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("measure", "[--port 8000 | --base-url URL] [--label L] [--json PATH] ...  (run.py's flags and defaults: 60 s, the long prompt at 20 s)\n\n"+
		"A short run names both times, the injection before the end:\n  servelab measure --port 8000 --label quick --duration 8 --inject-after 3 --json quick.json", stderr)
	d := lab.DefaultConfig()
	c := &d
	base := fs.String("base-url", "", "server root (default: http://<--host>:<--port>)")
	fs.StringVar(&c.Host, "host", c.Host, "server host")
	fs.IntVar(&c.Port, "port", c.Port, "server port (SGLang's launch_server uses 30000)")
	fs.StringVar(&c.API, "api", c.API, "which OpenAI-compatible route to drive: completions or chat")
	fs.StringVar(&c.Model, "model", "", "model name to send; if omitted, the first id from /v1/models")
	fs.StringVar(&c.Label, "label", c.Label, "name for this run in the output and JSON (e.g. chunked / unchunked)")
	fs.IntVar(&c.ShortConcurrency, "short-concurrency", c.ShortConcurrency, "short requests kept in flight")
	fs.IntVar(&c.ShortInputLen, "short-input-len", c.ShortInputLen, "approximate prompt length of the short requests")
	fs.IntVar(&c.ShortOutputLen, "short-output-len", c.ShortOutputLen, "max_tokens for the short requests")
	fs.IntVar(&c.LongInputLen, "long-input-len", c.LongInputLen, "approximate prompt length of the injected long request; it plus the output must fit the server's context")
	fs.IntVar(&c.LongOutputLen, "long-output-len", c.LongOutputLen, "max_tokens for the long request")
	fs.IntVar(&c.LongCount, "long-count", c.LongCount, "long prompts to inject at once")
	fs.Float64Var(&c.Duration, "duration", c.Duration, "seconds of short-request load (shorter than the default --inject-after, give it too: --duration 8 --inject-after 3)")
	fs.Float64Var(&c.InjectAfter, "inject-after", c.InjectAfter, "seconds into the run at which the long prompt is submitted; less than --duration")
	fs.IntVar(&c.Warmup, "warmup", c.Warmup, "untimed requests before the run")
	fs.BoolVar(&c.IgnoreEOS, "ignore-eos", true, "pin every response to its max_tokens")
	noEOS := fs.Bool("no-ignore-eos", false, "let responses stop naturally")
	fs.Float64Var(&c.Timeout, "timeout", c.Timeout, "per-request timeout in seconds (no data for this long)")
	fs.StringVar(&c.JSON, "json", "", "write the summary, the raw gap series and every frame to this JSON file")
	fs.IntVar(&c.Seed, "seed", c.Seed, "prompt generation seed")
	noUsage := fs.Bool("no-usage", false, "servelab: do not ask for stream_options usage (tokens per frame)")
	noFrames := fs.Bool("no-frames", false, "servelab: leave the raw frames out of the JSON")
	quiet := fs.Bool("quiet", false, "servelab: no progress line")
	noKernel := fs.Bool("no-kernel-time", false, "servelab: stamp frames when read, not with the kernel's receive time (Linux)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *noEOS {
		c.IgnoreEOS = false
	}
	c.BaseURL = *base
	if c.BaseURL == "" {
		c.BaseURL = "http://" + hostPort(c.Host, c.Port)
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	o := labclient.Options{Config: *c, APIKey: os.Getenv(apiKeyEnv), StreamUsage: !*noUsage, RawFrames: !*noFrames, Log: stdout}
	if err := o.Validate(); err != nil {
		return err
	}
	if o.JSON != "" {
		if err := labclient.CheckWritable(o.JSON); err != nil {
			return err
		}
	}
	if !*quiet {
		o.Progress = stderr
		if f, ok := stderr.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				o.ProgressCR = true
			}
		}
	}
	// Ctrl-C, SIGTERM and a terminal hang-up stop the run and save what was
	// measured; a second Ctrl-C kills at once, but not a second SIGHUP (the
	// shell passes one on after the kernel's). A closed stdout or stderr
	// (`| head`) no longer kills the process with SIGPIPE: what it would
	// print is dropped, and the run goes on to write --json.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	held := make(chan os.Signal, 1)
	signal.Notify(held, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(held)
	go func() { <-ctx.Done(); stop() }() // a second Ctrl-C kills at once
	stdout = &closedPipeNote{w: stdout, note: stderr, json: o.JSON}
	o.Log = stdout
	o.Client = labclient.NewClient(o.ShortConcurrency+o.LongCount, !*noKernel)
	if o.Model == "" {
		m, err := labclient.DiscoverModel(ctx, o.Client, o.BaseURL, o.APIKey)
		if err != nil {
			return err
		}
		o.Model = m
	}
	fmt.Fprintf(stdout, "server   %s (%s)\n", o.BaseURL, o.API)
	fmt.Fprintf(stdout, "model    %s\n", o.Model)
	fmt.Fprintf(stdout, "label    %s\n", o.Label)
	res, err := labclient.Measure(ctx, o)
	if err != nil {
		return err
	}
	labclient.Report(stdout, res.Measured.Summary, "measured")
	if x := res.Measured.Extra; x != nil && len(x.Warnings) > 0 {
		fmt.Fprintln(stdout)
		for _, w := range x.Warnings {
			fmt.Fprintf(stdout, "WARNING: %s\n", w)
		}
	}
	if o.JSON != "" {
		if err := labclient.SaveMeasured(o.JSON, res.Measured); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", o.JSON)
	}
	if res.Interrupted {
		where := "no --json given, so nothing was saved"
		if o.JSON != "" {
			where = "partial results saved to " + o.JSON
		}
		return fmt.Errorf("run stopped early: %v; %s", res.Stop, where)
	}
	if all, example := res.AllFailed(); all {
		return fmt.Errorf("every request failed, so nothing was measured (e.g. %s)", example)
	}
	fmt.Fprintln(stdout, "\nEverything above was measured on your server. Run the other configuration and use `servelab compare` (or run.py --compare); a single run tells you nothing about chunking.")
	return nil
}

// closedPipeNote passes writes to w until one fails (a closed pipe), then
// drops them, saying once on note where the results go.
type closedPipeNote struct {
	w, note io.Writer
	json    string
	mu      sync.Mutex
	failed  bool
}

// Write writes p to w, or drops it once a write has failed; it reports p as written.
func (c *closedPipeNote) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed {
		return len(p), nil
	}
	if _, err := c.w.Write(p); err != nil {
		c.failed = true
		where := "no --json given, so the results will not be kept"
		if c.json != "" {
			where = "the run goes on and is saved to " + c.json
		}
		fmt.Fprintf(c.note, "servelab measure: stdout closed (%v): %s\n", err, where)
	}
	return len(p), nil
}

func hostPort(host string, port int) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// readMeasuredFile reads a measured-JSON file written by run.py or servelab.
func readMeasuredFile(path string) (*lab.Measured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := lab.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

var errCompareArgs = errors.New("compare needs two or more measured-JSON files")
