package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"servelab/sim/results"
	"servelab/wasm/play"
)

// screenText is every text the page shows a person: the rendered text of
// the page (innerText: what is laid out, not hidden) and the hover texts
// (title attributes) of visible elements.
const screenText = `(() => {
	const out = [document.body.innerText];
	for (const e of document.querySelectorAll("[title]")) {
		if (e.offsetParent !== null || e.tagName === "IFRAME") out.push(e.getAttribute("title"));
	}
	return out.join("\n");
})()`

// englishWord is a run of Latin letters long enough to be a word, with
// what names carry inside (digits, hyphens, apostrophes, dots, underscores)
// and a flag's leading dashes, so names stay whole; a field's path
// (gaps[0].gap) is one name.
var englishWord = regexp.MustCompile(`(?:--)?[A-Za-z][A-Za-z0-9'_\-.\[\]]*[A-Za-z0-9\]]`)

// identifier reports whether a word is a name a student types or reads in
// a file, not prose: a flag, a file name, a field or a constant, a model's
// or a GPU's name (H100-SXM, Mistral-7B, TP4: a name with a digit), or a
// calibrated profile's.
func identifier(w string) bool {
	return strings.HasPrefix(w, "--") || strings.ContainsAny(w, "_.0123456789") || strings.HasPrefix(w, "cal-")
}

// keptInEnglish are the words the Chinese page keeps as they are: the
// lecture's own English terms (and the English names the glossary gives
// beside the Chinese), units, names of tools, models, GPUs, formats and
// keys (the format table's names among them), and the subcommands of servelab.
var keptInEnglish = strings.Fields(`TTFT TPOT ITL E2E GPU GPUs CPU KV SLO SLOs goodput prefill decode decodes token tokens cache
	compute-bound memory-bound all-reduce roofline GEMM TFLOP FLOP FLOPs key value usage itls itl tpot e2e sigma
	time first colocated disaggregated interference
	P50 P90 P99 p50 p90 p99 ms req tok mean max min
	vLLM vllm SGLang sglang GuideLLM guidellm AIPerf aiperf GenAI-Perf genai-perf llmperf DistServe Sarathi-Serve Sarathi
	OpenAI FlashDecoding TensorRT-LLM NCCL CUDA graph HBM NVLink concurrent poisson MTP EAGLE
	Llama Mistral Mixtral Qwen SXM PCIe RTX CPU-core
	JSON JSONL CSV PNG URL API HTTP SSE English Esc Page Down
	servelab lecture sim measure serve bench like fidelity fit free cmd testdata overhead summary gaps ttfts`)

// TestChineseScreenHasNoStrayEnglish opens the page in 中文 on every
// preset (from the preset menu after the first) and chapter (from the
// chapter bar after the first), uploads every benchmark tool's sample file and a
// lab file, calibrates, and collects the English words on screen. With
// ZH_SURVEY=1 it only lists them (with where they were seen).
func TestChineseScreenHasNoStrayEnglish(t *testing.T) {
	ctx := tab(t)
	base := serve(t)
	kept := map[string]bool{}
	for _, w := range keptInEnglish {
		kept[strings.ToLower(w)] = true
	}
	for _, f := range results.Formats { // an unplaceable file's note lists the formats tried
		kept[strings.ToLower(f.Name)] = true
	}
	seen := map[string][]string{} // a line with stray English -> the views it was seen in
	words := map[string]bool{}    // the stray words
	look := func(where string, skip ...string) {
		text := eval[string](t, ctx, screenText)
		for _, s := range skip {
			text = strings.ReplaceAll(text, s, "")
		}
		for _, line := range strings.Split(text, "\n") {
			for _, w := range englishWord.FindAllString(line, -1) {
				if identifier(w) {
					continue
				}
				w = strings.Trim(w, ".-'_")
				if len(w) < 3 || kept[strings.ToLower(w)] {
					continue
				}
				words[w] = true
				l := strings.TrimSpace(line)
				if len(seen[l]) == 0 || seen[l][len(seen[l])-1] != where {
					seen[l] = append(seen[l], where)
				}
			}
		}
	}

	presets := []string{"demo1", "demo2", "demo3", "demo4", "lab-unchunked", "lab-chunked", "distserve-colocated",
		"distserve-2p1d", "memory-pressure", "compare-chunking", "compare-disagg"}
	for i, p := range presets {
		if i == 0 {
			open(t, ctx, base+"?lang=zh&preset="+p)
			waitFor(t, ctx, `servelab.timings().drawnGen === servelab.timings().gen`, p+" drawn")
		} else {
			pickPreset(t, ctx, p)
		}
		look("preset " + p)
	}
	for i, c := range play.Chapters {
		if i == 0 {
			openChapter(t, ctx, base+"?lang=zh&chapter="+c.ID)
		} else {
			goToChapter(t, ctx, c.ID)
		}
		look("chapter " + c.ID)
	}

	// Every benchmark tool's file, then its summary beside it, each as run A.
	open(t, ctx, base+"?lang=zh")
	dir, err := filepath.Abs(filepath.Join("..", "..", "sim", "testdata", "bench"))
	if err != nil {
		t.Fatal(err)
	}
	upload := func(files ...string) {
		eval[any](t, ctx, `document.getElementById("clear-measured").click()`)
		waitFor(t, ctx, `servelab.status().overlays === 0`, "the measured runs cleared")
		if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), files)); err != nil {
			t.Fatalf("upload %v: %v", files, err)
		}
		waitFor(t, ctx, `servelab.status().overlays >= 1 && servelab.timings().drawnGen === servelab.timings().gen`, fmt.Sprint(files)+" laid over")
	}
	var skip []string // the files' own names and labels are theirs
	for _, f := range [][]string{{"vllm.json"}, {"sglang.jsonl"}, {"guidellm.json"}, {"guidellm_v02.json"},
		{"aiperf/profile_export.jsonl"}, {"aiperf/profile_export_raw.jsonl"}, {"aiperf/profile_export.jsonl", "aiperf/profile_export_aiperf.json"},
		{"genai-perf/profile_export.json"}, {"genai-perf/profile_export.json", "genai-perf/profile_export_genai_perf.json"},
		{"llmperf/m_550_150_individual_responses.json"}, {"llmperf/m_550_150_individual_responses.json", "llmperf/m_550_150_summary.json"}} {
		var paths []string
		for _, p := range f {
			paths = append(paths, filepath.Join(dir, p))
			skip = append(skip, filepath.Base(p))
		}
		upload(paths...)
		look("upload "+strings.Join(f, "+"), skip...)
	}

	// Files the readers refuse: the refusal is said in Chinese too.
	tmp := t.TempDir()
	vllm, err := os.ReadFile(filepath.Join(dir, "vllm.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Lab files the lab reader refuses: a key of the summary missing, a
	// negative gap, a gap that is no number.
	labData, err := os.ReadFile(labJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	badLab := func(old, new string) string {
		if !strings.Contains(string(labData), old) {
			t.Fatalf("%q is not in the lab file", old)
		}
		return strings.Replace(string(labData), old, new, 1)
	}
	for name, data := range map[string]string{
		"unknown.json":     `{"my_key": 1}`,
		"summary.json":     `{"median_ttft_ms": 0, "completed": 0, "failed": 3}`,
		"short.json":       strings.Replace(string(vllm), `"ttfts": [`, `"ttfts": [0.1, `, 1),
		"lab-missing.json": badLab(`"itl_p99": `, `"itl_p99x": `),
		"lab-gap.json":     badLab(`"gap": `, `"gap": -1`),
		"lab-gaptype.json": badLab(`"gap": `, `"gap": "slow", "x": `),
	} {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{p})); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, `document.getElementById("message").className === "error" && document.getElementById("message").textContent.includes("`+name+`")`, "the refusal of "+name)
		look("refused "+name, append(skip, name)...)
	}

	// A vLLM file calibrated, then a lab file calibrated.
	calibrate := func(what string) {
		waitFor(t, ctx, `document.getElementById("calibrate") !== null`, "the calibrate button")
		eval[chromedp.Void](t, ctx, `document.getElementById("calibrate").click()`)
		waitFor(t, ctx, `document.getElementById("calibrate-table") !== null`, "the calibration of "+what)
		look("calibrated "+what, skip...)
	}
	upload(filepath.Join(dir, "vllm.json"))
	calibrate("vllm.json")
	lab := labJSON(t)
	skip = append(skip, filepath.Base(lab), "cal-lab")
	upload(lab)
	look("upload lab.json", skip...)
	calibrate("lab.json")
	open(t, ctx, base+"?lang=zh&profile=vllm&gpu=A100-80GB")
	look("profile vllm A100", skip...)
	open(t, ctx, base+"?lang=zh&profile=vllm&gpu=H200")
	look("profile vllm H200", skip...)
	open(t, ctx, base+"?lang=zh&profile=vllm&gpu=L40S")
	look("profile vllm L40S", skip...)

	found := make([]string, 0, len(seen))
	for l := range seen {
		found = append(found, l)
	}
	sort.Strings(found)
	var report strings.Builder
	for _, l := range found {
		where := seen[l]
		if len(where) > 3 {
			where = append(where[:3:3], fmt.Sprintf("and %d more", len(seen[l])-3))
		}
		fmt.Fprintf(&report, "%s\n    [%s]\n", l, strings.Join(where, ", "))
	}
	if os.Getenv("ZH_SURVEY") != "" {
		t.Logf("%d lines hold English words on the Chinese page:\n%s", len(found), report.String())
		return
	}
	if len(found) > 0 {
		t.Errorf("%d lines of the Chinese page hold English words (the line, then where):\n%s", len(found), report.String())
	}
}

// TestCompareTableFitsItsPanel opens compare mode (prefill-first vs
// chunked) at a laptop (1280x720), a projector (1920x1080, projector mode
// too) and a phone (390x844), in both languages (the second from the
// page's language menu): the compare table's
// every column, B/A included, lies inside its panel, or the table scrolls
// sideways within it; and the page never scrolls sideways. With
// SERVELAB_SHOTS=DIR it writes a screenshot of the compare panel and of
// the whole window at each size.
func TestCompareTableFitsItsPanel(t *testing.T) {
	dir := os.Getenv("SERVELAB_SHOTS")
	ctx := tab(t)
	base := serve(t)
	for _, c := range []struct {
		w, h int64
		proj bool
	}{{1280, 720, false}, {1280, 720, true}, {1920, 1080, false}, {1920, 1080, true}, {390, 844, false}} {
		viewport(t, ctx, c.w, c.h)
		for i, lang := range []string{"en", "zh"} {
			url := base + "?preset=compare-chunking&lang=" + lang
			if c.proj {
				url += "&proj=1"
			}
			what := fmt.Sprintf("%s at %dx%d (projector %v)", lang, c.w, c.h, c.proj)
			if i == 0 {
				open(t, ctx, url)
			} else {
				pickLang(t, ctx, lang) // (the page in the other language from its menu)
			}
			waitFor(t, ctx, `document.querySelector("#cmp-table td:last-child") !== null && servelab.timings().drawnGen === servelab.timings().gen`, "the compare table")
			if eval[bool](t, ctx, `servelab.status().projector`) != c.proj {
				t.Fatalf("%s: projector mode not as the URL asks", what)
			}
			// How far the table's last column reaches past its panel's
			// inner edge, and whether the table scrolls sideways instead.
			m := eval[map[string]float64](t, ctx, `(() => {
				const sec = document.getElementById("compare"), tab = document.getElementById("cmp-table");
				const s = sec.getBoundingClientRect(), pad = parseFloat(getComputedStyle(sec).paddingRight);
				let right = 0;
				for (const td of tab.querySelectorAll("th, td")) right = Math.max(right, td.getBoundingClientRect().right);
				// The box that scrolls the table sideways, if one does (the table or a box around it in the panel).
				let sc = tab;
				while (sc !== sec && !(sc.scrollWidth > sc.clientWidth + 1 && /auto|scroll/.test(getComputedStyle(sc).overflowX))) sc = sc.parentElement;
				const scrolls = sc !== sec, box = sc.getBoundingClientRect();
				return {over: right - (s.right - pad), boxOver: box.right - (s.right - pad), scrolls: scrolls ? 1 : 0,
					page: document.documentElement.scrollWidth - window.innerWidth};
			})()`)
			if m["scrolls"] == 1 {
				if m["boxOver"] > 1 {
					t.Errorf("%s: the compare table scrolls but its box reaches %.0f px past its panel", what, m["boxOver"])
				}
			} else if m["over"] > 1 {
				t.Errorf("%s: the compare table's columns reach %.0f px past its panel (B/A is cut)", what, m["over"])
			}
			if m["page"] > 1 {
				t.Errorf("%s: the page is %.0f px wider than the window", what, m["page"])
			}
			if dir == "" {
				continue
			}
			name := fmt.Sprintf("compare-%s-%dx%d", lang, c.w, c.h)
			if c.proj {
				name += "-proj"
			}
			buf, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#compare")))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+"-panel.png"), buf, 0o644); err != nil {
				t.Fatal(err)
			}
			eval[chromedp.Void](t, ctx, `document.getElementById("compare").scrollIntoView()`)
			win, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+"-window.png"), win, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
