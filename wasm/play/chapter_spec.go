package play

import (
	"fmt"

	"servelab/sim/course"
)

// The speculative-decoding chapter: "speculation is a bet on idle
// compute". k draft tokens per step, each accepted with probability α:
// (1 − α^(k+1)) / (1 − α) tokens a step for the price of verifying k+1 per
// sequence. While a decode step is memory-bound the extra tokens are
// nearly free and each user's tokens come about that much faster; as the
// rate grows, the steps turn compute-bound and the same bet costs
// throughput (the shape of EAGLE's and Medusa's speed-ups falling with
// batch size in their papers, and of vLLM's speculative decoding guidance).
func init() {
	addChapter(Chapter{ID: "spec", Preset: "speculative", Moves: []string{"spa", "spk"}, Layout: "study", Options: 3, Answer: 3, Order: 7,
		Terms: []string{"specdec", "tpot", "throughput"},
		Study: &Study{Cols: []StudyCol{{"tpotoff", "ms"}, {"tpoton", "ms"}, {"speedup", "x"}, {"tputoff", "tok/s"}, {"tputon", "tok/s"}}, Bar: "speedup",
			Rows: func(s State) []StudyRow {
				var rows []StudyRow
				for _, rate := range specRates {
					x := s.Experiment
					off := course.NoSpec(x) // the side the drafts' sliders leave as it was
					offKey := fmt.Sprintf("%d|spec-off|%g|%s", s.Sess.FilesGen(), rate, off.Query())
					rows = append(rows, StudyRow{Key: "row.spec.rate", Args: []any{rate}, Pick: "rate=" + FormatNum(rate), Memo: fmt.Sprintf("spec|%g|%s", rate, x.Query()),
						Run: func(m *LectureCache) (map[string]float64, error) {
							o, err := m.Figures(offKey, func() (map[string]float64, error) {
								tpot, tput, err := course.SpecSide(x, rate, false)
								return map[string]float64{"tpotoff": tpot, "tputoff": tput}, err
							})
							if err != nil {
								return nil, err
							}
							tpot, tput, err := course.SpecSide(x, rate, true)
							if err != nil {
								return nil, err
							}
							return map[string]float64{"tpotoff": o["tpotoff"], "tputoff": o["tputoff"], "tpoton": tpot, "tputon": tput,
								"speedup": course.SpeedUp(o["tpotoff"], tpot)}, nil
						}})
				}
				return rows
			},
			Vals: func(s State, t *StudyTable) map[string]string {
				cross := "–"
				for i, r := range specRates {
					if t.At(i, "tputon") < t.At(i, "tputoff") {
						cross = FormatNum(r)
						break
					}
				}
				last := len(specRates) - 1
				return map[string]string{"k": fmt.Sprint(s.SpecTokens), "a": FormatNum(s.SpecAccept), "exp": fmt.Sprintf("%.2f", specExpected(s)),
					"lo": FormatNum(specRates[0]), "sp0": fmt.Sprintf("%.2f", t.At(0, "speedup")),
					"cross": cross, "hi": FormatNum(specRates[last]), "spn": fmt.Sprintf("%.2f", t.At(last, "speedup")),
					"toff": fmt.Sprintf("%.0f", t.At(last, "tputoff")), "ton": fmt.Sprintf("%.0f", t.At(last, "tputon"))}
			},
			// At the table's highest rate: is speculation still a speed-up for each user?
			Answer: func(s State, t *StudyTable) int {
				switch sp := t.At(len(specRates)-1, "speedup"); {
				case sp > 1.6:
					return 1
				case sp > 1:
					return 2
				}
				return 3
			},
		},
		// An acceptance rate at which speculation pays at every rate of the table (no crossover).
		Tasks: []Task{{Check: func(s State, t Tables) TaskCheck {
			if t.Study == nil || !t.Study.Complete() || t.Study.Err != nil {
				return TaskCheck{}
			}
			worst := t.Study.At(0, "tputon") / t.Study.At(0, "tputoff")
			for i := range t.Study.Rows {
				worst = min(worst, t.Study.At(i, "tputon")/t.Study.At(i, "tputoff"))
			}
			return TaskCheck{Done: worst >= 1, Now: fmt.Sprintf("%.2f×", worst)}
		}}},
	})
}

// specRates are the speculation chapter's rows: from one user's worth of
// load, where the decode step is memory-bound, to past the rate where
// verifying k+1 tokens per sequence makes it compute-bound.
var specRates = []float64{2, 8, 16, 32, 48, 64}

// specExpected is the formula's tokens per step at s's speculation (k
// draft tokens, the acceptance per position), as the engine states it.
func specExpected(s State) float64 {
	b, err := s.Experiment.Build()
	if err != nil {
		return 0
	}
	return b.Config.Spec.ExpectedTokens()
}
