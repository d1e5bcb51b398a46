package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"servelab/cmd/internal/companion"
	"servelab/cmd/internal/labserver"
)

// apiKeyEnv names the environment variable holding the lab server's API key:
// `servelab labserver` requires it when set, and `measure` and `serve` send it.
const apiKeyEnv = "SERVELAB_API_KEY"

// labServerFlags configure a simulated lab server (also embedded by `serve`).
type labServerFlags struct {
	engine         *expFlags
	served         string
	maxModelLen    int
	timeScale      float64
	streamInterval int
	cadence        time.Duration
	tokensPerWord  float64
	naturalLen     int
}

func addLabServerFlags(fs *flag.FlagSet) *labServerFlags {
	f := &labServerFlags{engine: addExperimentFlags(fs, engineGroups)}
	fs.StringVar(&f.served, "served-model-name", "", "model id the API serves (default: --model)")
	fs.IntVar(&f.maxModelLen, "max-model-len", 0, "longest prompt + max_tokens accepted; longer gets HTTP 400 as in vLLM (default: the model's context)")
	fs.Float64Var(&f.timeScale, "time-scale", 1, "wall seconds per simulated second (2 = half speed, 0.5 = double speed)")
	fs.IntVar(&f.streamInterval, "stream-interval", 1, "tokens per SSE frame, as vLLM's --stream-interval")
	fs.DurationVar(&f.cadence, "cadence", 0, "self-test mode: no engine, every stream gets a token exactly every D (e.g. 10ms)")
	fs.Float64Var(&f.tokensPerWord, "tokens-per-word", 1, "prompt tokens counted per whitespace-separated word")
	fs.IntVar(&f.naturalLen, "natural-len", 0, "responses without ignore_eos stop after this many tokens (0: always max_tokens)")
	return f
}

// server builds the lab server the flags describe.
func (f *labServerFlags) server() (*labserver.Server, error) {
	cfg := labserver.Config{ModelName: f.served, MaxModelLen: f.maxModelLen, TimeScale: f.timeScale,
		StreamInterval: f.streamInterval, Cadence: f.cadence, TokensPerWord: f.tokensPerWord,
		NaturalLen: f.naturalLen, APIKey: os.Getenv(apiKeyEnv)}
	if f.timeScale == 0 || f.streamInterval == 0 || f.tokensPerWord == 0 {
		return nil, errors.New("--time-scale, --stream-interval and --tokens-per-word must be positive")
	}
	step, err := f.engine.stepModel()
	if err != nil {
		return nil, err
	}
	cfg.Engine, err = f.engine.config(step)
	if err != nil {
		return nil, err
	}
	if cfg.ModelName == "" {
		cfg.ModelName = step.Model.Name
	}
	return labserver.New(cfg)
}

func (f *labServerFlags) describe(s *labserver.Server) string {
	c := s.Config()
	if c.Cadence > 0 {
		return fmt.Sprintf("self-test cadence: a token every %v on every stream", c.Cadence)
	}
	return fmt.Sprintf("%s on %s, profile %s, policy %s, time scale %g, %d token(s) per frame, max model len %d",
		c.Engine.Step.Model.Name, c.Engine.Step.GPU.Name, c.Engine.Step.Profile, c.Engine.Policy.Name(), c.TimeScale, c.StreamInterval, c.MaxModelLen)
}

// labServerUntil is labserver, running until ctx ends.
func labServerUntil(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("labserver", "[--port 8000] [--policy chunked --budget 2048] [--cadence 10ms] ...", stderr)
	host := fs.String("host", "127.0.0.1", "address to listen on (the lab server has no TLS; keep it on loopback unless you mean it)")
	port := fs.Int("port", 8000, "port to listen on (0: any free port)")
	lf := addLabServerFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	srv, err := lf.server()
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	h := srv.Handler()
	if companion.IsLoopback(*host) {
		// On loopback only local clients are meant: refuse other Host names
		// (a DNS-rebinding page) and any browser page's Origin.
		h = companion.Guard(h, companion.LoopbackHosts(ln.Addr().(*net.TCPAddr).Port), nil)
	}
	hs := companion.HTTPServer(h, companion.DefaultTimeouts)
	fmt.Fprintf(stdout, "servelab labserver on http://%s (model %q)\n  %s\n", ln.Addr(), srv.Config().ModelName, lf.describe(srv))
	if os.Getenv(apiKeyEnv) != "" {
		fmt.Fprintf(stdout, "  API key required (from $%s)\n", apiKeyEnv)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.Close() // ends the streams first, so Shutdown need not wait for them
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(sctx)
}
