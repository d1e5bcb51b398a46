// Command bench measures the lab tools' own timing (make bench):
//
//   - precision: against `servelab labserver --cadence D` (every token of
//     every stream exactly D apart), the p99 of |measured gap - D| for
//     `servelab measure` and for the lab script run.py, at 16, 64 and 256
//     streams, next to the lab server's own per-stream write-gap error;
//   - load: the lab server's token timing error (frame written minus the
//     simulator's time for it, and per-stream gap error) with 1000
//     concurrent streams, some of whose clients vanish mid-stream.
//
// It builds servelab, runs every server as its own process and every client
// as its own process, on loopback only. The lab server is the instrument, so
// by default it gets CPU 0 to itself and the clients the other CPUs
// (-isolate): on a small machine that stands in for a lab server machine.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"servelab/cmd/internal/atomicfile"
	"servelab/sim"
	labfile "servelab/sim/lab"
)

func main() {
	streams := flag.String("streams", "16,64,256", "stream counts for the precision benchmark")
	cadence := flag.Duration("cadence", 20*time.Millisecond, "the self-test server's token interval (20 ms: a decode step of a few hundred sequences)")
	duration := flag.Float64("duration", 4, "seconds of load per precision run")
	load := flag.Int("load", 1000, "concurrent streams for the lab server's own benchmark (0: skip)")
	skipPy := flag.Bool("no-python", false, "skip run.py")
	repeat := flag.Int("repeat", 1, "precision runs per tool and stream count (the summary takes the median p99)")
	out := flag.String("json", "", "also write the results to this JSON file")
	isolate := flag.Bool("isolate", true, "give the lab server CPU 0 and the clients the other CPUs (taskset), as a lab server on its own machine")
	flag.Parse()
	pin = setupIsolation(*isolate)
	if *repeat < 1 || *repeat > 100 {
		fmt.Fprintln(os.Stderr, "bench: -repeat must be in 1..100")
		os.Exit(2)
	}
	if err := run(*streams, *cadence, *duration, *load, *repeat, *skipPy, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// result is one line of the report.
type result struct {
	Bench      string  `json:"bench"`
	Tool       string  `json:"tool"`
	Streams    int     `json:"streams"`
	Gaps       int     `json:"gaps"`
	ErrP50ms   float64 `json:"err_p50_ms"`
	ErrP99ms   float64 `json:"err_p99_ms"`
	ErrMaxms   float64 `json:"err_max_ms"`
	ServerGap  float64 `json:"server_gap_err_p99_ms"` // the lab server's own per-stream write-gap error
	ServerLate float64 `json:"server_late_p99_ms"`
	Note       string  `json:"note,omitempty"`
}

func run(streamList string, cadence time.Duration, duration float64, load, repeat int, skipPy bool, jsonOut string) error {
	dir, err := os.MkdirTemp("", "servelab-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "servelab")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/servelab").CombinedOutput(); err != nil {
		return fmt.Errorf("go build (run from the repository root): %v\n%s", err, out)
	}
	script := filepath.Join("cmd", "servelab", "testdata", "run.py")
	py, pyErr := exec.LookPath("python3")
	if !skipPy && pyErr != nil {
		return fmt.Errorf("python3 is needed to compare with run.py (apt-get install -y python3), or pass -no-python")
	}
	var results []result
	loadavg, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("precision: |measured gap - true gap| against labserver --cadence %v (%.0f s per run; %d CPUs here, load average %s)\n",
		cadence, duration, runtime.NumCPU(), strings.Join(strings.Fields(string(loadavg))[:min(3, len(strings.Fields(string(loadavg))))], " "))
	for _, f := range strings.Split(streamList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-streams: bad count %q", f)
		}
		lab, err := startLab(bin, "--cadence", cadence.String())
		if err != nil {
			return err
		}
		tools := []string{"servelab measure"}
		if !skipPy {
			tools = append(tools, "run.py")
		}
		for rep := 0; rep < repeat; rep++ {
			for _, tool := range tools { // alternating, so a busy spell hits both
				path := filepath.Join(dir, fmt.Sprintf("%s-%d.json", strings.Fields(tool)[0], n))
				args := []string{"--base-url", lab.url, "--short-concurrency", strconv.Itoa(n), "--short-output-len", "50",
					"--short-input-len", "16", "--long-count", "0", "--duration", fmt.Sprint(duration),
					"--inject-after", fmt.Sprint(duration * 0.99), "--warmup", "0", "--json", path}
				var cmd *exec.Cmd
				if tool == "run.py" {
					cmd = exec.Command(py, append([]string{script}, args...)...)
				} else {
					cmd = exec.Command(bin, append([]string{"measure", "--quiet"}, args...)...)
				}
				lab.stats(true)
				pin.client(cmd)
				if out, err := cmd.CombinedOutput(); err != nil {
					lab.stop()
					return fmt.Errorf("%s at %d streams: %v\n%s", tool, n, err, tail(out))
				}
				st := lab.stats(false)
				r, err := gapErrors(path, cadence)
				if err != nil {
					lab.stop()
					return err
				}
				r.Bench, r.Tool, r.Streams, r.ServerGap, r.ServerLate = "precision", tool, n, st.GapErrP99ms, st.LateP99ms
				results = append(results, r)
				fmt.Printf("  %-16s %4d streams: p50 %7.3f ms  p99 %7.3f ms  max %8.3f ms  (%d gaps; server's own gap error p99 %.3f ms)\n",
					tool, n, r.ErrP50ms, r.ErrP99ms, r.ErrMaxms, r.Gaps, st.GapErrP99ms)
				if own, ok := ownErrors(path); ok {
					own.Bench, own.Tool, own.Streams = "precision-own", tool, n
					own.Note = "|client gap - gap between the server's send stamps|: the client's error alone"
					results = append(results, own)
					fmt.Printf("  %-16s %4d streams: p50 %7.3f ms  p99 %7.3f ms  max %8.3f ms  (its own error alone, against the server's send stamps)\n",
						"  (own)", n, own.ErrP50ms, own.ErrP99ms, own.ErrMaxms)
				}
			}
		}
		lab.stop()
	}
	// The summary: the median p99 over the repeats (and its range), per
	// tool and stream count.
	spread := func(bench, tool string, n int) (string, float64) {
		var xs []float64
		for _, r := range results {
			if r.Bench == bench && r.Tool == tool && r.Streams == n {
				xs = append(xs, r.ErrP99ms)
			}
		}
		med := sim.Percentile(xs, 50)
		if len(xs) == 1 {
			return fmt.Sprintf("%.3f ms", med), med
		}
		return fmt.Sprintf("%.3f ms (%.3f-%.3f)", med, slices.Min(xs), slices.Max(xs)), med
	}
	fmt.Printf("summary, median p99 over %d run(s) (range): against the cadence, which includes the server's own jitter; and measure's own error, against the server's send stamps\n", repeat)
	for _, f := range strings.Split(streamList, ",") {
		n, _ := strconv.Atoi(strings.TrimSpace(f))
		m, mMed := spread("precision", "servelab measure", n)
		own, _ := spread("precision-own", "servelab measure", n)
		line := fmt.Sprintf("  %4d streams: servelab measure %s, own error %s", n, m, own)
		if !skipPy {
			py, pyMed := spread("precision", "run.py", n)
			line += fmt.Sprintf("; run.py %s: %.1fx", py, pyMed/mMed)
		}
		fmt.Println(line)
	}
	if load > 0 {
		r, err := loadBench(bin, dir, load)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if jsonOut != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := atomicfile.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// loadBench holds n streams open on the engine-driven lab server with the
// lightest client there is (read and discard, no parsing, so the numbers are
// the server's), cuts a tenth of them off mid-stream, and reads the server's
// own timing error.
func loadBench(bin, dir string, n int) (result, error) {
	fmt.Printf("load: %d concurrent streams on the engine-driven lab server (chunked, --ideal), clients that only read\n", n)
	lab, err := startLab(bin, "--policy", "chunked", "--ideal")
	if err != nil {
		return result{}, err
	}
	defer lab.stop()
	client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: n, DisableCompression: true}}
	post := func(ctx context.Context, maxTokens int) error {
		req, _ := http.NewRequestWithContext(ctx, "POST", lab.url+"/v1/completions",
			strings.NewReader(fmt.Sprintf(`{"prompt":"%s","max_tokens":%d,"stream":true,"ignore_eos":true}`, strings.Repeat("1 ", 64), maxTokens)))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	pin.self()
	lab.stats(true)
	vanish := n / 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx := context.Background()
			if i < vanish { // these clients vanish after a second
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Second)
				defer cancel()
			}
			if err := post(ctx, 300); err != nil && i >= vanish {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	st := lab.stats(false)
	// The server must still answer promptly after all that.
	start := time.Now()
	if err := post(context.Background(), 3); err != nil {
		return result{}, fmt.Errorf("the lab server does not answer after the load: %v", err)
	}
	r := result{Bench: "load", Tool: "labserver", Streams: n, Gaps: int(st.Frames), ErrP50ms: st.LateP50ms, ErrP99ms: st.LateP99ms,
		ErrMaxms: st.LateMaxms, ServerGap: st.GapErrP99ms, ServerLate: st.LateP99ms,
		Note: fmt.Sprintf("%d clients vanished mid-stream; %d of the others failed; answered again in %.0f ms",
			vanish, failed, time.Since(start).Seconds()*1e3)}
	fmt.Printf("  %d streams, %d frames: written minus simulated time p50 %.3f ms, p99 %.3f ms, max %.3f ms; per-stream gap error p99 %.3f ms\n",
		n, st.Frames, st.LateP50ms, st.LateP99ms, st.LateMaxms, st.GapErrP99ms)
	fmt.Printf("  %s\n", r.Note)
	if failed > 0 {
		return r, fmt.Errorf("%d streams failed under load", failed)
	}
	return r, nil
}

// gapErrors reads a measured file's gaps and compares each with the cadence.
func gapErrors(path string, cadence time.Duration) (result, error) {
	m, err := readMeasured(path)
	if err != nil {
		return result{}, err
	}
	if len(m.Gaps) == 0 {
		return result{}, fmt.Errorf("%s: no gaps recorded", path)
	}
	d := cadence.Seconds()
	errs := make([]float64, len(m.Gaps))
	for i, g := range m.Gaps {
		errs[i] = math.Abs(g.Gap-d) * 1e3
	}
	r := result{Gaps: len(errs), ErrP50ms: sim.Percentile(errs, 50), ErrP99ms: sim.Percentile(errs, 99)}
	r.ErrMaxms = errs[len(errs)-1]
	return r, nil
}

// ownErrors compares each frame's measured gap with the gap between the
// server's send stamps on the same stream (servelab measure's raw frames
// keep them): the client's own error, the server's jitter taken out.
func ownErrors(path string) (result, bool) {
	m, err := readMeasured(path)
	if err != nil || m.Extra == nil || len(m.Extra.Frames) == 0 {
		return result{}, false
	}
	last := map[int]labfile.Frame{}
	var errs []float64
	for _, f := range m.Extra.Frames { // sorted by time
		if p, ok := last[f.Stream]; ok && f.ServerT > 0 && p.ServerT > 0 {
			errs = append(errs, math.Abs(f.Gap-(f.ServerT-p.ServerT))*1e3)
		}
		last[f.Stream] = f
	}
	if len(errs) == 0 {
		return result{}, false
	}
	r := result{Gaps: len(errs), ErrP50ms: sim.Percentile(errs, 50), ErrP99ms: sim.Percentile(errs, 99)}
	r.ErrMaxms = errs[len(errs)-1]
	return r, true
}

func readMeasured(path string) (*labfile.Measured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return labfile.Read(f)
}

// lab is a lab server process.
type lab struct {
	cmd *exec.Cmd
	url string
}

type stats struct {
	Frames      int64   `json:"frames"`
	LateP50ms   float64 `json:"late_p50_ms"`
	LateP99ms   float64 `json:"late_p99_ms"`
	LateMaxms   float64 `json:"late_max_ms"`
	GapErrP99ms float64 `json:"gap_err_p99_ms"`
}

func startLab(bin string, args ...string) (*lab, error) {
	cmd := exec.Command(bin, append([]string{"labserver", "--port", "0"}, args...)...)
	pin.server(cmd)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	i := strings.Index(line, "http://")
	if err != nil || i < 0 {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("labserver did not start: %q %v", line, err)
	}
	go io.Copy(io.Discard, stdout)
	return &lab{cmd: cmd, url: strings.Fields(line[i:])[0]}, nil
}

func (l *lab) stats(reset bool) stats {
	u := l.url + "/servelab/stats"
	if reset {
		u += "?reset=1"
	}
	var s stats
	if resp, err := http.Get(u); err == nil {
		json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
	}
	return s
}

func (l *lab) stop() {
	l.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { l.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		l.cmd.Process.Kill()
		<-done
	}
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// isolation wraps commands so the lab server, the measuring apparatus, has
// a CPU to itself and the clients under test run on the others: on a small
// machine this stands in for the lab server being its own machine, so a
// client is not charged for the server's jitter. (Not real-time priority: a
// SCHED_FIFO server starves the CPU's softirq thread, which delivers its
// loopback packets, and the frames then arrive late.)
type isolation struct{ taskset, clients string }

var pin isolation

// setupIsolation turns isolation on when asked and possible, and says which.
func setupIsolation(on bool) isolation {
	if !on || runtime.NumCPU() < 2 {
		return isolation{}
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil || exec.Command(taskset, "-c", "0", "true").Run() != nil {
		fmt.Println("isolation: off (needs taskset from util-linux)")
		return isolation{}
	}
	iso := isolation{taskset: taskset, clients: fmt.Sprintf("1-%d", runtime.NumCPU()-1)}
	fmt.Printf("isolation: lab server on CPU 0, clients on CPUs %s\n", iso.clients)
	return iso
}

// server runs cmd on CPU 0.
func (p isolation) server(cmd *exec.Cmd) {
	if p.taskset != "" {
		cmd.Args = append([]string{p.taskset, "-c", "0"}, cmd.Args...)
		cmd.Path = p.taskset
	}
}

// self moves this process (every thread) onto the clients' CPUs.
func (p isolation) self() {
	if p.taskset != "" {
		if out, err := exec.Command(p.taskset, "-a", "-cp", p.clients, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
			fmt.Printf("isolation: could not move the load clients: %v %s\n", err, out)
		}
	}
}

// client runs cmd on the clients' CPUs.
func (p isolation) client(cmd *exec.Cmd) {
	if p.taskset != "" {
		cmd.Args = append([]string{p.taskset, "-c", p.clients}, cmd.Args...)
		cmd.Path = p.taskset
	}
}
