package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"servelab/cmd/internal/companion"
	"servelab/cmd/internal/labserver"
	"servelab/sim"
	"servelab/site"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// serveUntil is serve, running until ctx ends.
func serveUntil(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "[--port 8420] [--lab NAME=URL ...] [--runs DIR]", stderr)
	host := fs.String("host", "127.0.0.1", "address to listen on; keep it loopback (the API runs measurements)")
	port := fs.Int("port", 8420, "port to listen on (0: any free port)")
	var labs, origins, hosts listFlag
	fs.Var(&labs, "lab", "a lab server measurements may target, as NAME=URL (repeatable; its key comes from $"+apiKeyEnv+"). None: embedded simulated ones")
	fs.Var(&origins, "allow-origin", "another page origin allowed to call the API, e.g. https://lab.example.edu (repeatable; never *)")
	fs.Var(&hosts, "allow-host", "another Host header value to accept, e.g. a name for this machine (repeatable)")
	runsDir := fs.String("runs", "servelab-runs", "directory where finished runs are saved as measured JSON")
	siteDir := fs.String("site", "", "serve the site from this directory instead of the built-in copy")
	contrast := fs.Bool("contrast", true, "embedded: also run the other policy (chunked vs prefill-first) as a second lab server")
	lf := addLabServerFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	defer ln.Close()
	actual := ln.Addr().(*net.TCPAddr).Port
	cfg := companion.Config{RunsDir: *runsDir, Log: stdout,
		AllowedHosts:   append(companion.LoopbackHosts(actual), hosts...),
		AllowedOrigins: append(companion.LoopbackOrigins(actual), origins...)}
	for _, o := range origins {
		if o == "*" || strings.HasSuffix(o, "/") {
			return fmt.Errorf("--allow-origin wants an exact origin like https://host[:port], got %q", o)
		}
	}
	if !companion.IsLoopback(*host) {
		hp := net.JoinHostPort(*host, strconv.Itoa(actual))
		cfg.AllowedHosts = append(cfg.AllowedHosts, hp)
		cfg.AllowedOrigins = append(cfg.AllowedOrigins, "http://"+hp)
		fmt.Fprintf(stderr, "WARNING: listening on %s, not loopback: anyone who can reach it can run measurements against your lab servers\n", hp)
	}
	if *siteDir != "" {
		if st, err := os.Stat(*siteDir); err != nil || !st.IsDir() {
			return fmt.Errorf("--site %s: not a directory", *siteDir)
		}
		cfg.Site = site.Handler(os.DirFS(*siteDir))
	} else {
		cfg.Site = site.Handler(site.FS)
	}
	key := os.Getenv(apiKeyEnv)
	for _, l := range labs {
		name, u, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("--lab wants NAME=URL, got %q", l)
		}
		cfg.Labs = append(cfg.Labs, companion.Lab{Name: name, BaseURL: strings.TrimRight(u, "/"), APIKey: key, Kind: "external"})
	}
	if len(cfg.Labs) == 0 {
		embedded, stop, err := startEmbeddedLabs(lf, *contrast)
		if err != nil {
			return err
		}
		defer stop()
		cfg.Labs = embedded
	}
	comp, err := companion.New(cfg)
	if err != nil {
		return err
	}
	hs := companion.HTTPServer(comp.Handler(), companion.DefaultTimeouts)
	fmt.Fprintf(stdout, "servelab serve: the playground on http://%s/\n", net.JoinHostPort(strings.Trim(*host, "[]"), strconv.Itoa(actual)))
	for _, l := range cfg.Labs {
		fmt.Fprintf(stdout, "  lab %-14s %s %s\n", l.Name, l.Kind, l.Description)
	}
	fmt.Fprintf(stdout, "  runs saved in %s\n", *runsDir)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		comp.Close()
		return err
	case <-ctx.Done():
	}
	comp.Close() // a running measurement stops and is saved
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// startEmbeddedLabs runs the simulated lab servers on loopback: the one the
// flags describe and, with contrast, the other policy too.
func startEmbeddedLabs(lf *labServerFlags, contrast bool) ([]companion.Lab, func(), error) {
	first, err := lf.server()
	if err != nil {
		return nil, nil, err
	}
	servers := []*labserver.Server{first}
	if contrast && first.Config().Cadence == 0 {
		other := "chunked"
		if first.Config().Engine.Policy.Name() == "chunked" {
			other = "prefill-first"
		}
		p, err := sim.NewPolicy(other, 0)
		if err != nil {
			first.Close()
			return nil, nil, err
		}
		cfg := first.Config()
		cfg.Engine.Policy = p
		s, err := labserver.New(cfg)
		if err != nil {
			first.Close()
			return nil, nil, err
		}
		servers = append(servers, s)
	}
	var labs []companion.Lab
	var closers []func()
	stop := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, s := range servers {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			stop()
			return nil, nil, err
		}
		// Only the companion talks to an embedded lab server: no other Host, no browser page.
		h := companion.Guard(s.Handler(), companion.LoopbackHosts(ln.Addr().(*net.TCPAddr).Port), nil)
		hs := companion.HTTPServer(h, companion.DefaultTimeouts)
		go hs.Serve(ln)
		closers = append(closers, func() { s.Close(); hs.Close() })
		c := s.Config()
		name := "cadence"
		if c.Cadence == 0 {
			name = c.Engine.Policy.Name()
		}
		labs = append(labs, companion.Lab{Name: name, BaseURL: "http://" + ln.Addr().String(), APIKey: c.APIKey,
			Kind: "embedded", Description: lf.describe(s)})
	}
	return labs, stop, nil
}
