package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servelab/sim"
	"servelab/sim/lab"

	"github.com/chromedp/chromedp"
)

// bigLabFile writes a valid lab JSON of about mb megabytes: a real
// summary and config, and the run's gaps repeated (shifted in time) until
// the file is that large, as a very long measurement would be.
func bigLabFile(t *testing.T, mb int) (string, int) {
	t.Helper()
	c := lab.DefaultConfig()
	c.ShortConcurrency, c.Duration, c.InjectAfter, c.LongInputLen = 8, 6, 2, 8000
	st, _ := sim.DefaultStepModel()
	pol, _ := sim.NewPolicy("prefill-first", 0)
	lo, err := sim.RunLab(sim.Config{Step: st, Policy: pol}, c.LabWorkload)
	if err != nil {
		t.Fatal(err)
	}
	gaps := lab.GapsFrom(lo.Run.Arrivals, c.InjectAfter)
	p := filepath.Join(t.TempDir(), "big-lab.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	cfg, _ := json.Marshal(c)
	sum, _ := json.Marshal(lab.Of(lo))
	fmt.Fprintf(w, "{\n  \"config\": %s,\n  \"summary\": %s,\n  \"gaps\": [\n", cfg, sum)
	n, size := 0, 0
	for rep := 0; size < mb<<20; rep++ {
		for _, g := range gaps {
			if n > 0 {
				w.WriteString(",\n")
			}
			k, _ := fmt.Fprintf(w, `    {"t_rel_inject": %.6f, "gap": %.6f}`, g.TRelInject+float64(rep)*c.Duration, g.Gap)
			size += k + 2
			n++
		}
	}
	w.WriteString("\n  ]\n}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p, n
}

// A valid 50 MB upload does not hold the page: it is read in slices with
// a progress bar (and Cancel), a timer in the page keeps firing, the
// page's API keeps answering, and the overlay lands with every gap.
func TestBigUploadKeepsThePageAnswering(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	f, n := bigLabFile(t, 50)
	fi, _ := os.Stat(f)
	t.Logf("upload: %.1f MB, %d gaps", float64(fi.Size())/1e6, n)

	// Cancel first: nothing changes.
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{f})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.getElementById("upload-cancel") !== null`, "the upload's progress and Cancel")
	eval[chromedp.Void](t, ctx, `document.getElementById("upload-cancel").click()`)
	waitFor(t, ctx, `document.getElementById("upload-cancel") === null && document.body.textContent.includes("cancelled")`, "the cancelled upload")
	if o := eval[int](t, ctx, `servelab.status().overlays`); o != 0 {
		t.Fatalf("a cancelled upload left %d overlays", o)
	}

	// The whole load, with the page watched: the timer's lateness, how
	// long servelab.status() takes to answer, sampled from the page itself,
	// and how much of the file each read of it asks the browser for (one
	// read of the whole file was one task of the browser's own, 80-170 ms).
	eval[chromedp.Void](t, ctx, `(() => { window.__reads = []; const ab = Blob.prototype.arrayBuffer;
		Blob.prototype.arrayBuffer = function() { window.__reads.push(this.size); return ab.call(this); }; })()`)
	eval[chromedp.Void](t, ctx, lateness(`document.getElementById("upload-progress").textContent !== ""`))
	eval[chromedp.Void](t, ctx, `(() => { window.__api = []; window.__apiTimer = setInterval(() => {
		if (document.getElementById("upload-progress").textContent === "") return;
		const t0 = performance.now(); servelab.status(); window.__api.push(performance.now() - t0); }, 50); })()`)
	t0 := eval[float64](t, ctx, `performance.now()`)
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{f})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `servelab.status().overlays === 1 && document.getElementById("upload-progress").textContent === ""`, "the big file overlaid")
	took := eval[float64](t, ctx, `performance.now()`) - t0
	worst, p99, ticks := lateStats(t, ctx)
	api := eval[[]float64](t, ctx, `(() => { clearInterval(window.__apiTimer); const l = window.__api.slice().sort((a, b) => a - b); return [l[l.length-1] || 0, l.length]; })()`)
	gcs := eval[float64](t, ctx, `servelab.timings().gcs`)
	t.Logf("50 MB upload: %.1f s to the overlay; a 10 ms timer fired %d times, worst %.0f ms late, p99 %.0f ms; servelab.status() answered %d times, slowest %.1f ms; %v collections since load",
		took/1e3, ticks, worst, p99, int(api[1]), api[0], gcs)
	if ticks < 10 {
		t.Errorf("the page's timer fired only %d times during the upload", ticks)
	}
	reads := eval[[]float64](t, ctx, `window.__reads`)
	sum, most := 0.0, 0.0
	for _, r := range reads {
		sum, most = sum+r, max(most, r)
	}
	t.Logf("the file was read in %d slices, the largest %.1f MB", len(reads), most/1e6)
	if sum != float64(fi.Size()) || most > 4<<20 {
		t.Errorf("the file's %d bytes were read as %.0f bytes, the largest read %.0f: want it all, in slices of at most 4 MiB", fi.Size(), sum, most)
	}
	if worst > 1000 {
		t.Errorf("the page was held %.0f ms during the upload", worst)
	}
	table := eval[string](t, ctx, `document.getElementById("measured-table").textContent`)
	if !strings.Contains(table, "big-lab.json") {
		t.Errorf("measured table lacks the file: %s", table)
	}
}
