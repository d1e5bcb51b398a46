package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"servelab/sim/lab"

	"github.com/chromedp/chromedp"
)

// TestProfilePanelsAtEverySize opens the profile, calibration and bench
// notes panels filled (vllm's constants, a calibrated lab run as A, a
// GuideLLM run as B) in both languages at a laptop (1280x720) and a phone
// (390x844): the page must not scroll sideways. With SERVELAB_SHOTS=DIR it
// also writes a screenshot of the assumptions and the measured panels.
func TestProfilePanelsAtEverySize(t *testing.T) {
	dir := os.Getenv("SERVELAB_SHOTS")
	ctx := tab(t)
	base := serve(t)
	c := lab.DefaultConfig()
	c.ShortConcurrency, c.Duration, c.InjectAfter, c.LongInputLen = 8, 8, 2, 8000
	lab := labFile(t, c)
	guide, _ := filepath.Abs(filepath.Join("..", "..", "sim", "testdata", "bench", "guidellm.json"))
	for _, sz := range [][2]int64{{1280, 720}, {390, 844}} {
		viewport(t, ctx, sz[0], sz[1])
		for _, lang := range []string{"en", "zh"} {
			open(t, ctx, base+"?lang="+lang)
			if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{lab})); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, `document.getElementById("calibrate") !== null`, "the calibrate button")
			eval[chromedp.Void](t, ctx, `document.getElementById("calibrate").click()`)
			waitFor(t, ctx, `document.getElementById("calibrate-table") !== null && servelab.timings().drawnGen === servelab.timings().gen`, "the calibration")
			if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{guide})); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, `servelab.status().overlays === 2 && document.querySelector("#bench-notes tr[data-fig]") !== null`, "the GuideLLM run as B")
			if over := eval[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
				t.Errorf("%s at %dx%d: the page is %.0f px wider than the window", lang, sz[0], sz[1], over)
			}
			if dir == "" {
				continue
			}
			eval[chromedp.Void](t, ctx, `servelab.setState({sel: 3})`)
			waitFor(t, ctx, `document.querySelector("#step-info .step-consts") !== null`, "the step's constants")
			eval[chromedp.Void](t, ctx, `document.querySelector("#step-info .step-consts").open = true`)
			for _, el := range []string{"#profile-constants", "#measured", "#step-info"} {
				sel := el
				if el == "#profile-constants" {
					sel = "fieldset:has(#profile-constants)"
				}
				buf, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
				if err != nil {
					t.Fatal(err)
				}
				name := filepath.Join(dir, el[1:]+"-"+lang+"-"+strconv.FormatInt(sz[0], 10)+".png")
				if err := os.WriteFile(name, buf, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
