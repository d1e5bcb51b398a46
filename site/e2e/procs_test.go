package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumCPU is the CPU time (user and system) that the Chromium of ctx
// has used so far in its GPU process and in its renderers, read from
// /proc; ok is false where there is no /proc. On a machine without a GPU
// the GPU process draws every frame in software: what it takes is what
// the page's own work shares the cores with.
func chromiumCPU(ctx context.Context) (gpu, renderers time.Duration, ok bool) {
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil || c.Browser.Process() == nil {
		return 0, 0, false
	}
	root := c.Browser.Process().Pid
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil || len(dirs) == 0 {
		return 0, 0, false
	}
	type proc struct {
		ppid  int
		ticks int64
	}
	procs := map[int]proc{}
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		st, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue // (it ended meanwhile)
		}
		// Counted from after the command's name (in parentheses, it may
		// hold spaces): the parent is field 1, utime and stime 11 and 12
		// (fields 4, 14 and 15 in proc(5)).
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		procs[pid] = proc{ppid, u + k}
	}
	under := func(pid int) bool {
		for n := 0; n < 16 && pid > 1; n++ {
			if pid == root {
				return true
			}
			pid = procs[pid].ppid
		}
		return false
	}
	const tick = 10 * time.Millisecond // USER_HZ, 100 on Linux
	for pid, p := range procs {
		if pid == root || !under(pid) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		switch args := string(cmd); {
		case strings.Contains(args, "--type=gpu-process"):
			gpu += time.Duration(p.ticks) * tick
		case strings.Contains(args, "--type=renderer"):
			renderers += time.Duration(p.ticks) * tick
		}
	}
	return gpu, renderers, true
}
