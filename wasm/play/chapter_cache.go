package play

import (
	"fmt"

	"servelab/sim/course"
)

// The prefix-caching chapter: "a cache hit is not a speed-up". Every
// prompt starts with the same system prompt, so the cache finds most of
// each prompt's tokens; the rows lengthen the answers at a fixed number of
// requests in flight (a benchmark at fixed concurrency, as vLLM's pull
// request #53395 measured 94.6% hits for a 5.7-6.2% throughput gain), and
// the gain in output tokens per second falls with them while the hit ratio
// stays: caching removes prefill work, and long answers are decode work.
func init() {
	addChapter(Chapter{ID: "cache", Preset: "prefix-cache", Moves: []string{"sys", "prompt"}, Layout: "study", Options: 3, Answer: 3, Order: 5,
		Terms: []string{"prefixcache", "hitratio", "ttft"},
		Study: &Study{Cols: []StudyCol{{"hit", "%"}, {"ttftoff", "ms"}, {"ttfton", "ms"}, {"gain", "%"}, {"share", "%"}}, Bar: "gain",
			Rows: func(s State) []StudyRow {
				var rows []StudyRow
				for _, out := range cacheOutputs {
					x := s.Experiment
					x.Requests = min(x.Requests, cacheRequests)
					rows = append(rows, StudyRow{Key: "row.cache.out", Args: []any{out}, Memo: fmt.Sprintf("cache|%d|%s", out, x.Query()), Run: func(*LectureCache) (map[string]float64, error) {
						t, err := course.Prefix(x, []int{out}, cacheConcurrency)
						if err != nil {
							return nil, err
						}
						r := t.Rows[0]
						return map[string]float64{"hit": r.HitRatio, "ttftoff": r.TTFTOff, "ttfton": r.TTFTOn, "gain": r.Gain, "share": r.PrefillShare}, nil
					}})
				}
				return rows
			},
			Vals: func(s State, t *StudyTable) map[string]string {
				first, last := 0, len(t.Rows)-1
				return map[string]string{"conc": fmt.Sprint(cacheConcurrency), "sys": fmt.Sprint(s.SystemPrompt), "q": fmt.Sprint(s.Prompt),
					"hit": pct(t.At(last, "hit")), "out0": fmt.Sprint(cacheOutputs[first]), "outn": fmt.Sprint(cacheOutputs[last]),
					"ttftoff": ms(t.At(first, "ttftoff")), "ttfton": ms(t.At(first, "ttfton")),
					"gain0": pct(t.At(first, "gain")), "gainn": pct(t.At(last, "gain")), "sharen": pct(t.At(last, "share"))}
			},
			Answer: func(s State, t *StudyTable) int {
				switch g := t.At(len(t.Rows)-1, "gain"); {
				case g < 0.10:
					return 3
				case g < 1.5:
					return 2
				}
				return 1
			},
		},
		// Raise the shared part until the cache finds over 95% of the
		// prompt tokens, then read the last row: still a few percent.
		Tasks: []Task{{Check: func(s State, t Tables) TaskCheck {
			if t.Study == nil || !t.Study.Complete() || t.Study.Err != nil {
				return TaskCheck{}
			}
			h := t.Study.At(len(t.Study.Rows)-1, "hit")
			return TaskCheck{Done: h > 0.95, Now: pct(h) + "%"}
		}}},
	})
}

// The prefix chapter's rows: answer lengths, at a fixed number of
// requests in flight, over a few hundred requests (enough for the cache to
// fill and the figures to settle; a row is one job of the page).
var cacheOutputs = []int{64, 256, 1024, 4096}

const (
	cacheConcurrency = 64
	cacheRequests    = 200
)

// pct writes a share as a percentage with one decimal.
func pct(v float64) string { return fmt.Sprintf("%.1f", 100*v) }
