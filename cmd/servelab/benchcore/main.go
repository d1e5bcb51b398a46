// Command benchcore measures the simulator core's speed (make bench-core):
//
//   - `servelab demo interference --json` against lecture05_plain.py, a
//     plain-Python implementation of the same model and demos, run side by
//     side (alternating, each as its own process), with the ratio of their
//     median wall times (target: servelab at least 100x faster);
//   - the 100 000-request run `servelab sim --policy chunked --budget 2048
//     --rate 40 --prompt 512 --output 64 --requests 100000`: wall time, CPU
//     time and peak memory (targets: 150 ms, 100 MB).
//
// It builds servelab first, static as make build makes it. Wall times on a
// shared machine include waiting for a CPU; the CPU time beside them does not.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"time"
)

func main() {
	repeat := flag.Int("repeat", 5, "runs of each command (the report takes medians)")
	python := flag.String("python", "python3", "the Python interpreter for the plain implementation")
	flag.Parse()
	if *repeat < 1 || *repeat > 100 {
		fmt.Fprintln(os.Stderr, "benchcore: -repeat must be in 1..100")
		os.Exit(2)
	}
	if err := run(*repeat, *python); err != nil {
		fmt.Fprintln(os.Stderr, "benchcore:", err)
		os.Exit(1)
	}
}

// sample is one process run.
type sample struct {
	wall, cpu time.Duration
	maxRSS    int64 // bytes
}

// measure runs the command once, discarding its output.
func measure(name string, args ...string) (sample, error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%s %v: %w", name, args, err)
	}
	s := sample{wall: time.Since(t0), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.maxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	return s, nil
}

func median(xs []sample, f func(sample) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func ms(s sample) float64    { return s.wall.Seconds() * 1e3 }
func cpu(s sample) float64   { return s.cpu.Seconds() * 1e3 }
func rssMB(s sample) float64 { return float64(s.maxRSS) / 1e6 }

func run(repeat int, python string) error {
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Dir(self)
	tmp, err := os.MkdirTemp("", "benchcore")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "servelab")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/servelab")
	build.Dir = filepath.Join(dir, "..", "..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as make build makes it
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building servelab: %w", err)
	}
	script := filepath.Join(dir, "lecture05_plain.py")

	fmt.Printf("servelab demo interference vs the plain-Python implementation (%d runs each, alternating, medians):\n", repeat)
	var goRuns, pyRuns []sample
	_, pyErr := exec.LookPath(python)
	for i := 0; i < repeat; i++ {
		s, err := measure(bin, "demo", "interference", "--json")
		if err != nil {
			return err
		}
		goRuns = append(goRuns, s)
		if pyErr == nil {
			p, err := measure(python, script)
			if err != nil {
				return err
			}
			pyRuns = append(pyRuns, p)
		}
	}
	fmt.Printf("  servelab demo interference   %8.1f ms wall  %8.1f ms CPU\n", median(goRuns, ms), median(goRuns, cpu))
	if pyErr != nil {
		fmt.Printf("  %s not found: no side-by-side ratio\n", python)
	} else {
		fmt.Printf("  python3 lecture05_plain.py   %8.1f ms wall  %8.1f ms CPU\n", median(pyRuns, ms), median(pyRuns, cpu))
		ratio := median(pyRuns, ms) / median(goRuns, ms)
		verdict := "target met"
		if ratio < 100 {
			verdict = "BELOW the 100x target"
		}
		fmt.Printf("  ratio (wall)                 %8.1fx  (%s; by CPU time %.1fx)\n", ratio, verdict, median(pyRuns, cpu)/median(goRuns, cpu))
	}

	args := []string{"sim", "--policy", "chunked", "--budget", "2048", "--rate", "40", "--prompt", "512", "--output", "64", "--requests", "100000", "--json"}
	var big []sample
	for i := 0; i < repeat; i++ {
		s, err := measure(bin, args...)
		if err != nil {
			return err
		}
		big = append(big, s)
	}
	fmt.Printf("100 000-request run (servelab %v):\n", args)
	w, c, m := median(big, ms), median(big, cpu), median(big, rssMB)
	fmt.Printf("  %8.1f ms wall  %8.1f ms CPU  %6.1f MB peak RSS  (targets 150 ms, 100 MB: %s)\n", w, c, m,
		map[bool]string{true: "met", false: "NOT met"}[w <= 150 && m <= 100])
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average while measuring: %s", load)
	}
	return nil
}
