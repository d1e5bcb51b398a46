package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// servelabCLI is the servelab binary, built once per test run (into a
// directory TestMain removes) for the tests that compare the page with it.
var servelabCLI = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "servelab-e2e-")
	if err != nil {
		return "", err
	}
	cliDir = dir
	bin := filepath.Join(dir, "servelab")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/servelab").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build servelab: %v\n%s", err, out)
	}
	return bin, nil
})

// cliDir is where servelabCLI built the binary ("" before).
var cliDir string

// lectureCLI is what `servelab demo interference --json` prints with no
// flags: the lecture's own numbers. It is run once per test run.
var lectureCLI = sync.OnceValues(func() (lectureJSON, error) {
	bin, err := servelabCLI()
	if err != nil {
		return lectureJSON{}, err
	}
	out, err := exec.Command(bin, "demo", "interference", "--json").Output()
	if err != nil {
		return lectureJSON{}, fmt.Errorf("servelab demo interference --json: %v", err)
	}
	var res lectureJSON
	if err := json.Unmarshal(out, &res); err != nil {
		return lectureJSON{}, fmt.Errorf("the CLI's JSON: %v", err)
	}
	return res, nil
})

// lectureJSON is the part of the CLI's JSON the chapters' tables show.
type lectureJSON struct {
	Demo1 []struct {
		Prompt      int     `json:"prompt"`
		DecodeOnly  float64 `json:"decode_only"`
		Mixed       float64 `json:"mixed"`
		PrefillOnly float64 `json:"prefill_only"`
		DecSlow     float64 `json:"decode_slowdown"`
		PreSlow     float64 `json:"prefill_slowdown"`
	} `json:"demo1_in_step"`
	Demo2 []struct {
		Rate    float64 `json:"rate"`
		ColTTFT float64 `json:"colocated_ttft_p90"`
		ColTPOT float64 `json:"colocated_tpot_p90"`
		PreTTFT float64 `json:"prefill_only_ttft_p90"`
		DecTPOT float64 `json:"decode_only_tpot_p90"`
	} `json:"demo2_latency_vs_rate"`
	Demo3 struct {
		Colocated float64 `json:"colocated"`
		Prefill   float64 `json:"prefill_only"`
		Decode    float64 `json:"decode_only"`
		Splits    []split `json:"splits"`
		Simulated []split `json:"simulated"`
		Advantage float64 `json:"best_over_colocated"`
	} `json:"demo3_goodput"`
	Demo4 []struct {
		Budget  int     `json:"budget"`
		TTFTP50 float64 `json:"ttft_p50"`
		TTFTP90 float64 `json:"ttft_p90"`
		TPOTP50 float64 `json:"tpot_p50"`
		TPOTP90 float64 `json:"tpot_p90"`
	} `json:"demo4_chunked"`
}

type split struct {
	Prefill int     `json:"prefill"`
	Decode  int     `json:"decode"`
	Total   float64 `json:"total"`
	PerGPU  float64 `json:"per_gpu"`
}

// skip marks a cell the comparison leaves alone (a name, a published figure).
var skip = math.NaN()

// want is each chapter's table as the CLI's numbers, row by row and
// column by column in the page's units (ms, req/s, ×).
func (l lectureJSON) want(demo int) [][]float64 {
	var rows [][]float64
	switch demo {
	case 1:
		for _, d := range l.Demo1 {
			rows = append(rows, []float64{float64(d.Prompt), d.DecodeOnly * 1e3, d.Mixed * 1e3, d.DecSlow, d.PrefillOnly * 1e3, d.PreSlow, skip})
		}
	case 2:
		for _, d := range l.Demo2 {
			rows = append(rows, []float64{d.Rate, d.ColTTFT * 1e3, d.ColTPOT * 1e3, d.PreTTFT * 1e3, d.DecTPOT * 1e3})
		}
	case 3:
		d := l.Demo3
		rows = append(rows, []float64{skip, 1, d.Colocated, d.Colocated, skip}, []float64{skip, 1, d.Prefill, skip, skip}, []float64{skip, 1, d.Decode, skip, skip})
		for _, s := range append(append([]split{}, d.Splits...), d.Simulated...) {
			rows = append(rows, []float64{skip, float64(s.Prefill + s.Decode), s.Total, s.PerGPU, skip})
		}
		rows = append(rows, []float64{skip, skip, skip, d.Advantage, skip})
	case 4:
		for _, d := range l.Demo4 {
			b := float64(d.Budget)
			if d.Budget == 0 {
				b = skip // prefill-first has no budget ("–")
			}
			rows = append(rows, []float64{skip, b, d.TTFTP50 * 1e3, d.TTFTP90 * 1e3, d.TPOTP50 * 1e3, d.TPOTP90 * 1e3})
		}
	}
	return rows
}

// shownNumber reads the number a cell shows ("7.67", "1.94×", "1.6 (whole
// system)") and the precision it is printed at (half its last digit).
func shownNumber(cell string) (v, half float64, ok bool) {
	f := strings.Fields(strings.TrimSpace(cell))
	if len(f) == 0 {
		return 0, 0, false
	}
	s := strings.TrimRight(f[0], "×x")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, 0, false
	}
	digits := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		digits = len(s) - i - 1
	}
	return v, 0.5 * math.Pow(10, -float64(digits)), true
}

// chapterTable is the open chapter's table body as text, row by row.
func chapterTable(t testing.TB, ctx context.Context) [][]string {
	t.Helper()
	return eval[[][]string](t, ctx, `[...document.querySelectorAll("#ch-table tr")].slice(1).map(r => [...r.children].map(c => c.textContent))`)
}

// checkChapterTable compares the open chapter's table with the CLI's
// numbers at the precision the page prints.
func checkChapterTable(t testing.TB, ctx context.Context, cli lectureJSON, demo int, where string) {
	t.Helper()
	got, want := chapterTable(t, ctx), cli.want(demo)
	if len(got) != len(want) {
		t.Errorf("%s: the table has %d rows, the CLI %d: %v", where, len(got), len(want), got)
		return
	}
	for i, row := range want {
		if len(got[i]) != len(row) {
			t.Errorf("%s: row %d has %d cells, want %d: %v", where, i, len(got[i]), len(row), got[i])
			continue
		}
		for j, w := range row {
			if math.IsNaN(w) {
				continue
			}
			v, half, ok := shownNumber(got[i][j])
			if !ok {
				t.Errorf("%s: row %d column %d shows %q, want %.4g", where, i, j, got[i][j], w)
				continue
			}
			if math.Abs(v-w) > half+1e-9 {
				t.Errorf("%s: row %v column %d shows %s where `servelab demo interference` gives %.4f", where, got[i][0], j, got[i][j], w)
			}
		}
	}
}

// TestChaptersShowTheLecture: each chapter, opened as a student opens it
// (its link and nothing else), in English and in Chinese, shows the numbers
// `servelab demo interference --json` prints with no flags, at the
// precision its table prints; moving to another chapter keeps the
// lecture's workload seed, so its table is the lecture's too.
func TestChaptersShowTheLecture(t *testing.T) {
	cli, err := lectureCLI()
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t)
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			ctx := tab(t)
			for demo := 1; demo <= 4; demo++ {
				openChapter(t, ctx, fmt.Sprintf("%s?chapter=demo%d&lang=%s", base, demo, lang))
				waitFor(t, ctx, `servelab.lecture().done`, "the chapter's table")
				checkChapterTable(t, ctx, cli, demo, fmt.Sprintf("?chapter=demo%d&lang=%s", demo, lang))
				if seed := eval[float64](t, ctx, `servelab.getState().seed`); seed != 0 {
					t.Errorf("?chapter=demo%d runs workload seed %g, the lecture's is 0", demo, seed)
				}
			}
		})
	}
	// Moving on from a chapter: demo 1's link, then the tabs to demo 4 and demo 2.
	ctx := tab(t)
	openChapter(t, ctx, base+"?chapter=demo1&lang=en")
	for _, demo := range []int{4, 2} {
		goToChapter(t, ctx, fmt.Sprintf("demo%d", demo))
		if title := eval[string](t, ctx, `document.getElementById("ch-title").textContent`); !strings.HasPrefix(title, fmt.Sprintf("Demo %d", demo)) {
			t.Errorf("the chapter bar's demo %d shows the title %q", demo, title)
		}
		if seed := eval[float64](t, ctx, `servelab.getState().seed`); seed != 0 {
			t.Errorf("moving to demo %d set the workload seed to %g, the lecture's is 0", demo, seed)
		}
		if q := eval[string](t, ctx, `location.search`); strings.Contains(q, "seed=") && !strings.Contains(q, "seed=0") {
			t.Errorf("after moving to demo %d the link says %s", demo, q)
		}
		checkChapterTable(t, ctx, cli, demo, fmt.Sprintf("demo %d reached from demo 1", demo))
	}
}

// TestChapterLinksKeepTheirSettings: a hand-written chapter link keeps its
// own settings on top of the chapter's preset, in the chapter's sliders and
// table too; a value out of range is clamped with a note the page shows.
func TestChapterLinksKeepTheirSettings(t *testing.T) {
	ctx := tab(t)
	base := serve(t)
	openChapter(t, ctx, base+"?chapter=demo4&rate=30&seed=0&lang=en")
	waitFor(t, ctx, `servelab.lecture().done`, "the chapter's table")
	if rate := eval[float64](t, ctx, `servelab.getState().rate`); rate != 30 {
		t.Errorf("?chapter=demo4&rate=30 opens at rate %g", rate)
	}
	if v := eval[string](t, ctx, `document.getElementById("ch-rate").value`); v != "30" {
		t.Errorf("the chapter's rate slider reads %q, want 30", v)
	}
	if c := eval[string](t, ctx, `document.querySelector("#ch-table caption").textContent`); !strings.Contains(c, "30 req/s") {
		t.Errorf("the chapter's table is not at rate 30: %q", c)
	}
	if seed := eval[float64](t, ctx, `servelab.getState().seed`); seed != 0 {
		t.Errorf("&seed=0 became seed %g", seed)
	}
	waitFor(t, ctx, `location.search.includes("chapter=demo4")`, "the link to name the chapter")
	if q := eval[string](t, ctx, `location.search`); !strings.Contains(q, "rate=30&") || !strings.Contains(q, "seed=0") {
		t.Errorf("the page's own link dropped rate 30 or seed 0: %s", q)
	}
	if vis := eval[bool](t, ctx, `(() => { const n = document.getElementById("notes"); return !n.hidden && n.offsetParent !== null && n.textContent !== ""; })()`); vis {
		t.Errorf("a link in range shows a note: %q", eval[string](t, ctx, `document.getElementById("notes").textContent`))
	}
	for _, lang := range []string{"en", "zh"} {
		openChapter(t, ctx, base+"?chapter=demo4&rate=500&lang="+lang)
		waitFor(t, ctx, `servelab.lecture().done`, "the chapter's table")
		if rate := eval[float64](t, ctx, `servelab.getState().rate`); rate != 200 {
			t.Errorf("%s: &rate=500 opens at rate %g, want it clamped to 200", lang, rate)
		}
		note := eval[map[string]any](t, ctx, `(() => { const n = document.getElementById("notes"), r = n.getBoundingClientRect();
			return {text: n.textContent, shown: !n.hidden && n.offsetParent !== null && r.width > 0 && r.height > 0 && getComputedStyle(n).visibility !== "hidden"}; })()`)
		text, _ := note["text"].(string)
		if note["shown"] != true || !strings.Contains(text, "500") || !strings.Contains(text, "200") {
			t.Errorf("%s: the clamped rate's note is %v, want it shown, naming 500 and 200", lang, note)
		}
	}
}
