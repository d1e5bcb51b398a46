//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"servelab/sim"
	labfile "servelab/sim/lab"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestPageRunsFromWorker opens the page from workerd in headless Chromium:
// the app must start from the wasm the worker serves (compressed, through
// edge.mjs), find the edge proxy at api/info (there is no companion at
// api/health) and run a short lab measurement itself, through the proxy,
// against a lab server driven by the simulated engine: the measured run
// must be overlaid with tokens observed and the long prompt's stall.
func TestPageRunsFromWorker(t *testing.T) {
	root := repoRoot(t)
	workerd := findWorkerd(t, root)
	site := stageSite(t, root)
	// The lab runs at a third of the simulated H100's speed: the stall it
	// shows (the long prompt's prefill step and a decode, 0.72 s) is then far
	// above what a busy shared machine adds to or takes from one gap through
	// workerd and Chromium (up to 0.15 s seen at scale 1), and a 128-token
	// response lasts 2.6 s, so every stream is mid-response when the long
	// prompt arrives, however long its upload takes (at scale 1, 0.9 s
	// responses could all be ending just then, and the stall go unseen).
	const scale = 3
	l, engine := newSimLab(t, scale)
	labURL := serveLab(t, l)
	// Limits a course would set for a closed loop (see README): the page's
	// loop sends a request each time a short stream ends.
	base := startWorkerd(t, workerd, buildWorker(t, root, site, labURL+"/v1", limits{maxTokens: 1024, maxBody: 65536, perMinute: 1200, burst: 300}))
	ctx, wait := openPage(t, base)
	// The live panel offers the edge proxy.
	live, err := chromedp.Run(ctx, chromedp.Poll[bool](`servelab.status().liveProbed && servelab.status().liveEdge && !document.getElementById("live").hidden`,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil || !live {
		st, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(servelab.status())`))
		t.Fatalf("the live panel does not offer the edge proxy (%v): status %s", err, st)
	}
	// A short run: 4 streams of 128 tokens for 4 s, 8000 tokens at 1.5 s.
	w := sim.LabWorkload{ShortConcurrency: 4, ShortInputLen: 128, ShortOutputLen: 128, LongInputLen: 8000, LongOutputLen: 8, LongCount: 1, Duration: 4, InjectAfter: 1.5}
	set := fmt.Sprintf(`servelab.setState({policy: "prefill-first", streams: %d, sin: %d, sout: %d, long: %d, longout: %d, duration: %g, inject: %g})`,
		w.ShortConcurrency, w.ShortInputLen, w.ShortOutputLen, w.LongInputLen, w.LongOutputLen, w.Duration, w.InjectAfter)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](set)); err != nil {
		t.Fatal(err)
	}
	wait(fmt.Sprintf(`servelab.getState().long === 8000 && servelab.getState().duration === 4 && servelab.getState().sout === %d`, w.ShortOutputLen), "the lab knobs to be set")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("live-start").click()`)); err != nil {
		t.Fatal(err)
	}
	wait(`servelab.status().liveFrames > 0`, "token frames to land on the timeline while the run goes on")
	wait(`servelab.liveResult() !== ""`, "the edge run to finish")
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`servelab.liveResult()`))
	if err != nil {
		t.Fatal(err)
	}
	var m labfile.Measured
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("the run is not lab JSON: %v\n%.500s", err, text)
	}
	s := m.Summary
	st, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("live-status").textContent`))
	t.Logf("live status: %s", st)
	if m.Extra != nil {
		t.Logf("warnings: %q", m.Extra.Warnings)
	}
	if s.TokensObserved <= 0 || !(s.WorstGap > 0) || s.ShortCompleted < w.ShortConcurrency || s.ShortFailed != 0 || s.LongFailed != 0 || s.LongTTFT <= 0 {
		t.Fatalf("measured summary %+v", s)
	}
	if m.Config.LabWorkload.ShortConcurrency != w.ShortConcurrency || m.Config.ShortInputLen != w.ShortInputLen || m.Config.ShortOutputLen != w.ShortOutputLen ||
		m.Config.LongInputLen != w.LongInputLen || m.Config.Model != "e2e-model" {
		t.Errorf("config %+v, want the page's workload and the lab server's model", m.Config)
	}
	// The same workload in the simulator (on its clock, scale times faster):
	// the long prompt's prefill stalls every stream. The lab server must have
	// stalled them so (its exact timing is its own tests' concern), and the
	// browser must see the stall it sent, through the proxy: as its worst
	// gap, ending with the long prompt's first token, and as long.
	pw := m.Config.LabWorkload
	pw.Duration, pw.InjectAfter = pw.Duration/scale, pw.InjectAfter/scale
	pred, err := sim.RunLab(engine, pw)
	if err != nil {
		t.Fatal(err)
	}
	simStall := scale * labfile.Of(pred).WorstGap
	stall, endAfterLong, median := l.sentStall()
	sent := stall.Seconds()
	ls := l.server.Stats(false)
	t.Logf("through workerd: worst gap %.1f ms at %+.2f s, quiet p50 %.1f ms, ITL p99 %.1f ms, long TTFT %.1f ms, %d tokens observed, %d short requests; the lab sent a stall of %.1f ms, a median gap of %.1f ms (frames late p99 %.1f ms, max %.1f ms); simulator: worst gap %.1f ms, quiet p50 %.1f ms, long TTFT %.1f ms",
		1e3*s.WorstGap, s.WorstGapOffset, 1e3*s.ITLQuietP50, 1e3*s.ITLP99, 1e3*s.LongTTFT, s.TokensObserved, s.ShortCompleted,
		1e3*sent, 1e3*median.Seconds(), ls.LateP99ms, ls.LateMaxms, 1e3*simStall, scale*1e3*labfile.Of(pred).ITLQuietP50, scale*1e3*labfile.Of(pred).LongTTFT)
	// The lab stalled its streams: the gap it left over the long prompt's
	// prefill is many of its decode gaps (simulated: 36; a frame the busy
	// machine made it write late can shorten it).
	if stall < 4*median {
		t.Errorf("the lab server's gap over the long prompt's prefill was %.1f ms, its median gap %.1f ms: the lab did not stall its streams", 1e3*sent, 1e3*median.Seconds())
	}
	if !(s.WorstGap >= 0.7*sent && s.WorstGap <= 1.3*sent) {
		t.Errorf("measured worst gap %.1f ms, the lab server sent a stall of %.1f ms: want within 30%%", 1e3*s.WorstGap, 1e3*sent)
	}
	// It is the long prompt's stall: it ended when the lab's did, after the
	// long prompt's first token (one decode step after, unless the busy
	// machine made the lab write late). Both are the page's own times from
	// the injection, against the lab's own times.
	if d := s.WorstGapOffset - s.LongTTFT - endAfterLong.Seconds(); math.Abs(d) > 0.25*simStall {
		t.Errorf("the worst gap ended at %+.3f s, %.3f s after the long prompt's first token; the lab's stall ended %.3f s after it: the worst gap is not the long prompt's stall",
			s.WorstGapOffset, s.WorstGapOffset-s.LongTTFT, endAfterLong.Seconds())
	}
	// The page overlays it as run A.
	ov, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`servelab.status().overlays`))
	if ov < 1 {
		t.Errorf("no measured overlay on the page after the run")
	}
	table, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("measured-table")||{}).textContent || ""`))
	t.Logf("measured vs simulated on the page: %s", table)
	if ok, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const b = document.getElementById("live-download"); return !!b && !b.hidden; })()`)); !ok {
		t.Errorf("no download button for the measured JSON")
	}
	// Stop ends a run early: what was measured is kept, the aborted
	// requests are not failures.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`servelab.setState({duration: 30, inject: 20})`)); err != nil {
		t.Fatal(err)
	}
	wait(`servelab.getState().duration === 30`, "the longer run's knobs")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("live-start").click()`)); err != nil {
		t.Fatal(err)
	}
	wait(`servelab.status().liveRunning && servelab.status().liveFrames > 0`, "the second run's frames")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("live-stop").click()`)); err != nil {
		t.Fatal(err)
	}
	wait(`!servelab.status().liveRunning && servelab.liveResult() !== ""`, "the stopped run to end")
	text, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`servelab.liveResult()`))
	var stopped labfile.Measured
	if err := json.Unmarshal([]byte(text), &stopped); err != nil || stopped.Extra == nil || !stopped.Extra.Interrupted || stopped.Summary.ShortFailed != 0 || stopped.Summary.TokensObserved <= 0 {
		t.Errorf("stopped run: %v, summary %+v", err, stopped.Summary)
	}
	// Every completion the lab server saw was one of the page's prompts:
	// distinct random integers, no prefix shared by the streams.
	l.mu.Lock()
	defer l.mu.Unlock()
	distinct := map[string]bool{}
	for _, p := range l.prompts {
		if p != "" {
			distinct[p] = true
		}
	}
	if len(distinct) < min(32, s.ShortCompleted) {
		t.Errorf("%d distinct prompts for %d short requests", len(distinct), s.ShortCompleted)
	}
}

// openPage opens base in a fresh headless Chromium and waits for the app's
// first frame. wait polls a predicate on the page, failing the test with the
// page's message when it does not come true within a minute.
func openPage(t *testing.T, base string) (context.Context, func(pred, what string)) {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("Chromium not found at %s (install it with `apt-get install -y chromium`, as .ci/run does): %v", path, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 800),
		chromedp.Flag("use-angle", "swiftshader"), chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	// The page's console and uncaught exceptions, shown when the test fails.
	var mu sync.Mutex
	var console []string
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		var line string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			line = string(ev.Type) + ":"
			for _, a := range ev.Args {
				if len(a.Value) > 0 {
					line += " " + string(a.Value)
				} else {
					line += " " + a.Description
				}
			}
		case *runtime.EventExceptionThrown:
			line = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				line += " " + ev.ExceptionDetails.Exception.Description
			}
		default:
			return
		}
		mu.Lock()
		console = append(console, line)
		mu.Unlock()
	}))
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			t.Logf("page console:\n%s", strings.Join(console, "\n"))
			mu.Unlock()
		}
	})
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	wait := func(pred, what string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](pred, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second))); err != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			msg, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`(document.getElementById("message")||{}).textContent + " | live: " + ((document.getElementById("live-status")||{}).textContent || "") + " " + JSON.stringify(window.servelab && servelab.status ? servelab.status() : null)`))
			state, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`JSON.stringify({servelab: !!window.servelab, ready: !!(window.servelab && servelab.ready), timings: window.servelab && servelab.timings ? servelab.timings() : null})`))
			t.Fatalf("waiting for %s (%s): %v; page message: %q; state %s", what, pred, err, msg, state)
		}
	}
	wait(`window.servelab && servelab.ready && servelab.timings().drawnGen >= 1`, "the app to draw its first frame")
	t.Logf("the app drew its first frame %v after navigating to the worker", time.Since(start).Round(time.Millisecond))
	return ctx, wait
}

// TestEdgeLiveWithDefaultLimits runs the page's own edge workload (its
// knobs untouched) through a worker with the default limits: it must fit
// them. A worker with a burst of 3 must stop the run with a clear message
// about its rate limit, keeping what was measured. A browser that will not
// start the page's stream reader (a Web Worker) must end the run with a
// message that says so, not hang.
func TestEdgeLiveWithDefaultLimits(t *testing.T) {
	root := repoRoot(t)
	workerd := findWorkerd(t, root)
	site := stageSite(t, root)
	l, _ := newSimLab(t, 1)
	labURL := serveLab(t, l)
	for _, tc := range []struct {
		name string
		lim  limits
	}{{"defaults", limits{}}, {"burst3", limits{perMinute: 6, burst: 3}}, {"noworker", limits{}}} {
		t.Run(tc.name, func(t *testing.T) {
			base := startWorkerd(t, workerd, buildWorker(t, root, site, labURL+"/v1", tc.lim))
			ctx, wait := openPage(t, base)
			wait(`servelab.status().liveEdge && !document.getElementById("live").hidden`, "the live panel to offer the edge proxy")
			if tc.name == "noworker" {
				if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`window.Worker = undefined`)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("live-start").click()`)); err != nil {
				t.Fatal(err)
			}
			wait(`servelab.liveResult() !== "" || /could not start/.test(document.getElementById("live-status").textContent)`, "the edge run to end")
			st, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("live-status").textContent`))
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`servelab.liveResult()`))
			t.Logf("live status: %s", st)
			var m labfile.Measured
			json.Unmarshal([]byte(text), &m)
			if tc.name == "defaults" {
				if text == "" || m.Extra == nil || m.Extra.Interrupted || m.Summary.ShortFailed != 0 || m.Summary.TokensObserved <= 0 || !(m.Summary.WorstGap > 0) {
					t.Fatalf("the page's edge defaults did not fit the default limits: status %q, summary %+v", st, m.Summary)
				}
				if m.Config.ShortConcurrency != 4 || m.Config.Duration != 10 {
					t.Errorf("edge defaults not applied: %+v", m.Config.LabWorkload)
				}
				t.Logf("edge defaults: %d short requests, worst gap %.1f ms, wall %.1f s", m.Summary.ShortCompleted, 1e3*m.Summary.WorstGap, m.Summary.Wall)
				return
			}
			if tc.name == "noworker" {
				if !strings.Contains(st, "stream reader") || servelabRunning(ctx) {
					t.Fatalf("without Web Workers the run must end saying why: status %q", st)
				}
				return
			}
			if !strings.Contains(st, "429") || !strings.Contains(st, "RATE_LIMIT_PER_MINUTE") {
				t.Fatalf("a 429 from the proxy is not explained on the page: %q", st)
			}
			if text != "" && (m.Extra == nil || !m.Extra.Interrupted) {
				t.Errorf("a run stopped by the rate limit is not marked interrupted: %+v", m.Extra)
			}
		})
	}
}

// servelabRunning reports whether the page still has a live run going.
func servelabRunning(ctx context.Context) bool {
	running, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`servelab.status().liveRunning`))
	return running
}
