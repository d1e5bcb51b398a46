//go:build unix

package main

import (
	"bufio"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"servelab/cmd/internal/labserver"
)

// measureHelperEnv makes this test binary run `servelab measure` with the
// arguments after "--" instead of the tests, with the real stdout and stderr.
const measureHelperEnv = "SERVELAB_MEASURE_HELPER"

func TestMeasureHelperProcess(t *testing.T) {
	if os.Getenv(measureHelperEnv) != "1" {
		t.Skip("runs only as the child of TestMeasureSurvivesHangupAndClosedPipe")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(args, os.Stdout, os.Stderr))
}

// TestMeasureSurvivesHangupAndClosedPipe: a terminal hang-up (SIGHUP)
// stops the run like Ctrl-C and saves what was measured; a closed stdout
// (`servelab measure ... | head`) does not kill it: the run goes on and its
// JSON is written.
func TestMeasureSurvivesHangupAndClosedPipe(t *testing.T) {
	s, err := labserver.New(labserver.Config{Cadence: 5 * time.Millisecond, ModelName: "m"})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer func() { s.Close(); hs.Close() }()
	measure := func(path string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMeasureHelperProcess$", "--", "measure", "--base-url", hs.URL,
			"--warmup", "0", "--short-concurrency", "2", "--short-output-len", "32", "--long-input-len", "100",
			"--long-output-len", "4", "--duration", "3", "--inject-after", "1", "--json", path)
		cmd.Env = append(os.Environ(), measureHelperEnv+"=1")
		return cmd
	}

	t.Run("SIGHUP", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "hup.json")
		cmd := measure(path)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		// A hang-up comes from the kernel and again from the shell.
		cmd.Process.Signal(syscall.SIGHUP)
		time.Sleep(50 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGHUP)
		err := cmd.Wait()
		if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			t.Fatalf("killed by %v: the run was lost\n%s", st.Signal(), stderr.String())
		}
		if err == nil {
			t.Errorf("exit 0 after a hang-up; want non-zero, as after Ctrl-C")
		}
		m, rerr := readMeasuredFile(path)
		if rerr != nil {
			t.Fatalf("no JSON after SIGHUP: %v\n%s", rerr, stderr.String())
		}
		if m.Extra == nil || !m.Extra.Interrupted || m.Summary.TokensObserved == 0 {
			t.Errorf("after SIGHUP: %+v %+v, want the partial run", m.Summary, m.Extra)
		}
	})

	t.Run("closed stdout", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "pipe.json")
		cmd := measure(path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// `| head -1`: read one line, then go away.
		line, _ := bufio.NewReader(out).ReadString('\n')
		out.Close()
		if !strings.HasPrefix(line, "server") {
			t.Errorf("first line %q", line)
		}
		err = cmd.Wait()
		if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			t.Fatalf("killed by %v once stdout closed: the run was lost\n%s", st.Signal(), stderr.String())
		}
		if err != nil {
			t.Errorf("exit %v\n%s", err, stderr.String())
		}
		m, rerr := readMeasuredFile(path)
		if rerr != nil {
			t.Fatalf("no JSON after stdout closed: %v\n%s", rerr, stderr.String())
		}
		if (m.Extra != nil && m.Extra.Interrupted) || m.Summary.ShortCompleted == 0 {
			t.Errorf("after stdout closed: %+v %+v, want the whole run", m.Summary, m.Extra)
		}
		if !strings.Contains(stderr.String(), "stdout") {
			t.Errorf("stderr does not say that stdout was closed: %q", stderr.String())
		}
	})
}
