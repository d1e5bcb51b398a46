package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// evalAwait evaluates expr, a promise, and returns what it resolves to.
func evalAwait[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// bigVLLMFile writes a vLLM `bench serve --save-detailed` result of about
// mb megabytes, on one line as vLLM's json.dump writes it: n requests of
// 256 output tokens, every gap at full float precision, start times, and
// the generated texts.
func bigVLLMFile(t *testing.T, mb int) (string, int) {
	t.Helper()
	n := mb << 20 / 5600
	p := filepath.Join(t.TempDir(), "vllm-big.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	list := func(key string, item func(i int) string) {
		fmt.Fprintf(w, `, "%s": [`, key)
		for i := range n {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(item(i))
		}
		w.WriteString("]")
	}
	fmt.Fprintf(w, `{"date": "20261201-120000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": %d, "request_rate": 8.0, "burstiness": 1.0, "max_concurrency": null, "duration": %g, "completed": %d, "median_ttft_ms": 41.5`, n, float64(n)/8+6, n)
	list("input_lens", func(i int) string { return fmt.Sprint(400 + i%200) })
	list("output_lens", func(int) string { return "256" })
	list("ttfts", func(i int) string { return fmt.Sprintf("%.17f", 0.03+float64(i%50)*0.0007) })
	list("itls", func(i int) string {
		var sb strings.Builder
		sb.WriteString("[")
		for j := range 255 {
			if j > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "%.18f", 0.012+float64((i*31+j*7)%97)*0.00003)
		}
		sb.WriteString("]")
		return sb.String()
	})
	list("start_times", func(i int) string { return fmt.Sprintf("%.6f", 1.7e9+float64(i)/8) })
	list("generated_texts", func(i int) string { return fmt.Sprintf(`"answer %d: \u00e9t\u00e9 中文"`, i) })
	list("errors", func(int) string { return `""` })
	w.WriteString("}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p, n
}

// bigSGLangFile writes SGLang bench_serving's JSONL of about mb
// megabytes: runs appended one a line, Python's Infinity for an unbounded
// rate, the per-request arrays.
func bigSGLangFile(t *testing.T, mb, runs int) (string, int) {
	t.Helper()
	n := mb << 20 / runs / 2700
	p := filepath.Join(t.TempDir(), "sglang-big.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for r := range runs {
		fmt.Fprintf(w, `{"backend": "sglang", "request_rate": Infinity, "max_concurrency": 64, "median_ttft_ms": 80.0, "median_e2e_latency_ms": 2100.0, "server_info": {"run": %d}`, r)
		list := func(key string, item func(i int) string) {
			fmt.Fprintf(w, `, "%s": [`, key)
			for i := range n {
				if i > 0 {
					w.WriteString(", ")
				}
				w.WriteString(item(i))
			}
			w.WriteString("]")
		}
		list("input_lens", func(i int) string { return fmt.Sprint(1000 + i%300) })
		list("output_lens", func(int) string { return "128" })
		list("ttfts", func(i int) string { return fmt.Sprintf("%.16f", 0.08+float64(i%40)*0.001) })
		list("itls", func(i int) string {
			var sb strings.Builder
			sb.WriteString("[")
			for j := range 127 {
				if j > 0 {
					sb.WriteString(", ")
				}
				fmt.Fprintf(&sb, "%.16f", 0.015+float64((i*13+j*5+r)%89)*0.00004)
			}
			sb.WriteString("]")
			return sb.String()
		})
		list("errors", func(int) string { return `""` })
		w.WriteString("}\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p, n
}

// watch starts, in the page, a 10 ms timer (its lateness) and a frame loop
// (the gaps between frames) while the upload's progress shows; answers
// times the page's own API from Go meanwhile, until done says stop.
func watch(t *testing.T, ctx context.Context) {
	eval[chromedp.Void](t, ctx, lateness(`document.getElementById("upload-progress").textContent !== ""`))
	eval[chromedp.Void](t, ctx, `(() => { window.__frames = []; let last = performance.now(); window.__frameOn = true;
		window.__holds = [];
		const loop = (now) => { const p = document.querySelector("#upload-progress progress");
			if (document.getElementById("upload-progress").textContent !== "") window.__frames.push(now - last);
			if (now - last > 100) window.__holds.push([Math.round(now - last), p ? +p.value : -1, Math.round(now)]);
			last = now; if (window.__frameOn) requestAnimationFrame(loop); };
		requestAnimationFrame(loop); })()`)
}

// roundTrips waits for cond, timing an evaluation in the page (a
// requestAnimationFrame there and back) every 50 ms; it returns their times (ms).
func roundTrips(t *testing.T, ctx context.Context, cond, what string) []float64 {
	t.Helper()
	var rts []float64
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		t0 := time.Now()
		done := evalAwait[bool](t, ctx, `new Promise(r => requestAnimationFrame(() => r(`+cond+`)))`)
		rts = append(rts, float64(time.Since(t0).Microseconds())/1e3)
		if done {
			return rts
		}
		time.Sleep(50 * time.Millisecond)
	}
	msg := eval[string](t, ctx, `(document.getElementById("message")||{}).textContent || ""`)
	t.Fatalf("waiting for %s: %s; page message %q", what, cond, msg)
	return nil
}

func worstOf(xs []float64) (worst, p99 float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0, 0
	}
	return s[len(s)-1], s[(len(s)-1)*99/100]
}

// A valid 50 MB benchmark tool's file (vLLM's bench JSON, SGLang's JSONL)
// does not hold the page: it is read in slices with a progress bar and
// Cancel; the page keeps answering all along (a round trip through a
// frame, timed from here, and its own timer and frames: the test prints
// the worst against the 100 ms); Cancel changes nothing, and a
// complete read lays the run over the timeline with its figures.
func TestBigBenchUploadsKeepThePageAnswering(t *testing.T) {
	ctx := tab(t)

	open(t, ctx, serve(t))
	vf, vn := bigVLLMFile(t, 50)
	sf, sn := bigSGLangFile(t, 50, 2)
	for _, c := range []struct {
		path, tool string
		requests   int
	}{{vf, "vllm", vn}, {sf, "sglang", sn}} {
		name := filepath.Base(c.path)
		fi, _ := os.Stat(c.path)
		t.Logf("%s: %.1f MB, %d requests a run", name, float64(fi.Size())/1e6, c.requests)
		before := eval[int](t, ctx, `servelab.status().overlays`)

		// Cancel: nothing changes.
		if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{c.path})); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, `document.getElementById("upload-cancel") !== null`, "the upload's progress and Cancel")
		time.Sleep(1500 * time.Millisecond) // into the parsing, past the copy
		frac := eval[float64](t, ctx, `+document.querySelector("#upload-progress progress").value`)
		eval[chromedp.Void](t, ctx, `document.getElementById("upload-cancel").click()`)
		waitFor(t, ctx, `document.getElementById("upload-cancel") === null && document.body.textContent.includes("cancelled")`, "the cancelled upload")
		if o := eval[int](t, ctx, `servelab.status().overlays`); o != before {
			t.Fatalf("%s: a cancelled upload changed the overlays from %d to %d", name, before, o)
		}
		t.Logf("%s: cancelled at %.0f%%", name, 100*frac)

		// The whole read, watched.
		watch(t, ctx)
		t0 := time.Now()
		if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{c.path})); err != nil {
			t.Fatal(err)
		}
		seen := evalAwait[bool](t, ctx, `new Promise(r => { const t0 = performance.now(); const f = () => {
			const p = document.querySelector("#upload-progress progress"); if (p) r(true); else if (performance.now() - t0 > 10000) r(false); else requestAnimationFrame(f); }; f(); })`)
		if !seen {
			t.Fatalf("%s: no progress bar", name)
		}
		rts := roundTrips(t, ctx, `servelab.status().overlays === `+fmt.Sprint(before+1)+` && document.getElementById("upload-progress").textContent === ""`, name+" overlaid")
		took := time.Since(t0)
		// The last round trip saw the run land: the page lays it over the
		// timeline and simulates its workload (its requests at its rate) in
		// that frame, which is the simulation's time, not the reading's.
		landing := rts[len(rts)-1]
		rts = rts[:len(rts)-1]
		// Then its workload is re-simulated, spread over frames when long.
		resim := roundTrips(t, ctx, `!servelab.status().simulating`, name+"'s workload simulated")
		worstSim, _ := worstOf(resim)
		late, lateP99, ticks := lateStats(t, ctx)
		frames := eval[[]float64](t, ctx, `(() => { window.__frameOn = false; return window.__frames; })()`)
		t.Logf("%s: frames held over 100 ms [ms, progress then (-1: none), at]: %v", name, eval[[][]float64](t, ctx, `window.__holds`))
		worstRT, p99RT := worstOf(rts)
		worstFrame, p99Frame := worstOf(frames)
		t.Logf("%s: %.1f s upload to overlay; while read, round trips through a frame: %d, worst %.0f ms, p99 %.0f ms; frames %d, worst gap %.0f ms, p99 %.0f ms; a 10 ms timer fired %d times, worst %.0f ms late, p99 %.0f ms; the frame it landed in: %.0f ms; then its workload re-simulated over %d round trips, worst %.0f ms (simulation %.0f ms of CPU)",
			name, took.Seconds(), len(rts), worstRT, p99RT, len(frames), worstFrame, p99Frame, ticks, late, lateP99, landing, len(resim), worstSim, eval[float64](t, ctx, `servelab.timings().simMs`))
		if len(rts) < 10 || ticks < 10 {
			t.Errorf("%s: the page was sampled only %d and %d times", name, len(rts), ticks)
		}
		// The 100 ms is a figure this test prints (above), not one
		// it asserts: on a loaded machine a frame waits for the CPU too. It
		// fails where the page was plainly held.
		if worstRT > 1000 || worstFrame > 1000 || late > 1000 || worstSim > 1000 {
			t.Errorf("%s: the page was held: worst round trip %.0f ms (%.0f ms while its workload re-simulated), frame gap %.0f ms, timer lateness %.0f ms", name, worstRT, worstSim, worstFrame, late)
		}
		notes := eval[string](t, ctx, `document.getElementById("bench-notes").textContent`)
		if !strings.Contains(notes, name) || !strings.Contains(notes, fmt.Sprint(c.requests)) {
			t.Errorf("%s: the bench notes lack the file or its %d requests: %.300s", name, c.requests, notes)
		}
		if rows := eval[int](t, ctx, `document.querySelectorAll("#bench-notes tr[data-fig]").length`); rows < 9 {
			t.Errorf("%s: the figure table has %d rows", name, rows)
		}
		table := eval[string](t, ctx, `document.getElementById("measured-table").textContent`)
		if !strings.Contains(table, name) {
			t.Errorf("%s: measured table lacks the file: %.300s", name, table)
		}
	}
}

// A broken 50 MB file gets the whole reader's words, and what the page
// showed stays.
func TestBigBenchUploadBrokenSaysWhy(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	vf, _ := bigVLLMFile(t, 20)
	data, err := os.ReadFile(vf)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "vllm-cut.json")
	cut := bytes.LastIndex(data[:len(data)*3/4], []byte(", ")) + 2 // between two values: json says the input ended
	if err := os.WriteFile(bad, data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{vf})); err != nil {
		t.Fatal(err)
	}
	roundTrips(t, ctx, `servelab.status().overlays === 1 && document.getElementById("upload-progress").textContent === ""`, "the good file overlaid")
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{bad})); err != nil {
		t.Fatal(err)
	}
	roundTrips(t, ctx, `document.getElementById("message").textContent.includes("vllm-cut.json")`, "the broken file's message")
	msg := eval[string](t, ctx, `document.getElementById("message").textContent`)
	if !strings.Contains(msg, "vllm-cut.json is not JSON, nor JSON Lines: unexpected end of JSON input") {
		t.Errorf("message %q", msg)
	}
	if o := eval[int](t, ctx, `servelab.status().overlays`); o != 1 {
		t.Errorf("the broken file left %d overlays, want the first one kept", o)
	}
}
