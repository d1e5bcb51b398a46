package main

import (
	"net"
	"os"
	"strings"
	"testing"
)

// run.py's defaults inject the long prompt at 20 s, so --duration 8 alone is
// refused (as run.py refuses it); the help and the README show a short run
// that passes, and the refusal says how to make one.
func TestMeasureShowsAShortRunThatWorks(t *testing.T) {
	_, out, errs := cli(t, "measure", "--help")
	help := out + errs
	var example []string
	for _, line := range strings.Split(help, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "servelab" && f[1] == "measure" && strings.Contains(line, "--duration") {
			example = f[1:]
		}
	}
	if example == nil {
		t.Fatalf("the help shows no run with --duration:\n%s", help)
	}
	// Against a port nobody listens on, the example gets past the flags'
	// checks and fails only at finding the server.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	args := append(example, "--base-url", "http://"+addr, "--quiet")
	for i, a := range args {
		if a == "--json" {
			args[i+1] = t.TempDir() + "/quick.json"
		}
	}
	code, _, errs := cli(t, args...)
	if code == 0 || strings.Contains(errs, "--inject-after") || strings.Contains(errs, "--duration") {
		t.Errorf("the help's short run %v: exit %d, %s", args, code, errs)
	}
	if code, _, errs := cli(t, "measure", "--duration", "8", "--base-url", "http://"+addr); code == 0 || !strings.Contains(errs, "e.g. --duration 8 --inject-after 3") {
		t.Errorf("--duration 8 alone: exit %d, %q; want the refusal to show a short run", code, errs)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "servelab measure --port 8000 --label quick --duration 8 --inject-after 3") {
		t.Error("the README's lab examples show no short run")
	}
}
