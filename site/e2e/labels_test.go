package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// labelBoxes is every canvas label's box (CSS pixels of the canvas's
// frame) with its text and class.
const labelBoxes = `[...document.getElementById("view").contentDocument.querySelectorAll("#labels span")].map(s => {
	const r = s.getBoundingClientRect();
	return {text: s.textContent, cls: s.className, l: r.left, t: r.top, r: r.right, b: r.bottom};
})`

type labelBox struct {
	Text, Cls  string
	L, T, R, B float64
}

// TestCanvasLabelsDoNotOverlap opens the timeline at a laptop's and a
// projector's sizes, in projector mode and not, in both languages, on a
// colocated run, the lab's closed loop, one with a memory lane and compare
// mode's two panes: no canvas label's box overlaps another's (the lane
// labels "requests (N)" and "inter-token gap" ran into each other in
// projector mode at 1280x720), the left margin's labels keep their order
// top-down, and nothing failed to draw (a pane too short for lanes panicked).
// Each size and language loads the first preset's link; the others are
// chosen from the preset menu. With SERVELAB_SHOTS=DIR it writes a
// screenshot of the canvas in each.
func TestCanvasLabelsDoNotOverlap(t *testing.T) {
	dir := os.Getenv("SERVELAB_SHOTS")
	ctx := tab(t)
	base := serve(t)
	for _, c := range []struct {
		w, h int64
		proj bool
	}{{1280, 720, true}, {1920, 1080, true}, {1280, 720, false}, {1920, 1080, false}, {1400, 900, false}} {
		viewport(t, ctx, c.w, c.h)
		for _, lang := range []string{"en", "zh"} {
			for i, preset := range []string{"demo2", "lab-chunked", "memory-pressure", "compare-chunking"} {
				what := fmt.Sprintf("%s %s at %dx%d (projector %v)", preset, lang, c.w, c.h, c.proj)
				if i == 0 {
					url := base + "?preset=" + preset + "&lang=" + lang
					if c.proj {
						url += "&proj=1"
					}
					open(t, ctx, url)
				} else {
					pickPreset(t, ctx, preset) // (the next from the menu: one page load a size and language)
				}
				waitFor(t, ctx, `servelab.timings().drawnGen === servelab.timings().gen && servelab.status().projector === `+fmt.Sprint(c.proj), what+" drawn")
				if msg := eval[string](t, ctx, `document.getElementById("message").textContent`); strings.Contains(msg, "internal error") || strings.Contains(msg, "内部错误") {
					t.Errorf("%s: the drawing failed: %s", what, msg)
				}
				boxes := eval[[]labelBox](t, ctx, labelBoxes)
				lanes := 0
				for _, b := range boxes {
					if b.Cls == "row" {
						lanes++
					}
				}
				if lanes < 3 { // a GPU row, the requests' lanes, the gaps
					t.Fatalf("%s: %d row labels on the canvas: %+v", what, lanes, boxes)
				}
				// The left margin's labels read top-down in the order they are
				// made: a note ("N shown", "max") stays under its name.
				prev := labelBox{}
				for _, b := range boxes {
					if b.L > 10 {
						continue // a tick or a note on the plot
					}
					if prev.Text != "" && b.T < prev.T {
						t.Errorf("%s: margin label %q (top %.0f) is above %q (top %.0f), which comes before it", what, b.Text, b.T, prev.Text, prev.T)
					}
					prev = b
				}
				for i, a := range boxes {
					for _, b := range boxes[i+1:] {
						// Boxes that touch within a pixel (a line's leading) do not overlap.
						if min(a.R, b.R)-max(a.L, b.L) > 1 && min(a.B, b.B)-max(a.T, b.T) > 1 {
							t.Errorf("%s: label %q (%.0f,%.0f to %.0f,%.0f) overlaps %q (%.0f,%.0f to %.0f,%.0f)",
								what, a.Text, a.L, a.T, a.R, a.B, b.Text, b.L, b.T, b.R, b.B)
						}
					}
				}
				if dir == "" {
					continue
				}
				buf, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.ID("view")))
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("labels-%s-%s-%dx%d", preset, lang, c.w, c.h)
				if c.proj {
					name += "-proj"
				}
				if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
