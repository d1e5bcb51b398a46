package play

import (
	"fmt"

	"servelab/sim/course"
)

// The routing chapter: "where should this request go?". Multi-turn
// sessions over four replicas with prefix caching: round-robin spreads the
// load and scatters each session's history; least-outstanding balances on
// requests in flight; prefix-aware follows the cached history; and
// least-outstanding acting on load figures half a second old sends a burst
// to the replica that looked idle (the herding that llm-d's and Dynamo's
// routers avoid by scoring on fresh KV-cache and queue state).
func init() {
	addChapter(Chapter{ID: "route", Preset: "routing", Moves: []string{"stale", "rate", "turns"}, Layout: "study", Options: 3, Answer: 3, Order: 6,
		Terms: []string{"router", "hitratio", "ttft", "prefixcache"},
		Study: &Study{Cols: []StudyCol{{"hit", "%"}, {"ttft50", "ms"}, {"ttft90", "ms"}, {"ttft99", "ms"}, {"busiest", "%"}, {"herd", ""}}, Bar: "ttft90",
			Rows: func(s State) []StudyRow {
				var rows []StudyRow
				for _, st := range course.RouteSettings(routeStale(s)) {
					x := s.Experiment
					key, args := "row.route."+string(st.Route), []any{}
					if st.Stale > 0 {
						key, args = "row.route.stale", []any{T(s.Lang, "route."+string(st.Route)), st.Stale * 1e3}
					}
					y := x // the experiment the row runs: its figures' one dependence
					y.Route, y.RouteStale = string(st.Route), st.Stale
					rows = append(rows, StudyRow{Key: key, Args: args, Memo: "route|" + y.Query(),
						Pick: fmt.Sprintf("route=%s&stale=%s", st.Route, FormatNum(st.Stale*1e3)),
						Run: func(*LectureCache) (map[string]float64, error) {
							r, err := course.RouteOne(x, st.Route, st.Stale)
							if err != nil {
								return nil, err
							}
							return map[string]float64{"hit": r.HitRatio, "ttft50": r.TTFTP50, "ttft90": r.TTFTP90, "ttft99": r.TTFTP99,
								"busiest": r.Busiest, "herd": float64(r.Herd)}, nil
						}})
				}
				return rows
			},
			Vals: func(s State, t *StudyTable) map[string]string {
				best := 0
				for i := range t.Rows {
					if t.At(i, "ttft90") < t.At(best, "ttft90") {
						best = i
					}
				}
				return map[string]string{"reps": fmt.Sprint(s.Replicas), "stale": FormatNum(routeStale(s) * 1e3),
					"best": T(s.Lang, "route."+string(course.RouteSettings(0)[best].Route)), "bestp90": ms(t.At(best, "ttft90")),
					"rrhit": pct(t.At(0, "hit")), "pahit": pct(t.At(2, "hit")),
					"lo99": ms(t.At(1, "ttft99")), "st99": ms(t.At(3, "ttft99")), "loherd": FormatStudy(t.At(1, "herd"), ""), "stherd": FormatStudy(t.At(3, "herd"), "")}
			},
			// Stale figures against fresh ones, for least-outstanding at P99.
			Answer: func(s State, t *StudyTable) int {
				switch r := t.At(3, "ttft99") / t.At(1, "ttft99"); {
				case r < 1.1:
					return 1
				case r < 1.5:
					return 2
				}
				return 3
			},
		},
		// Old figures herd: raise their age until least-outstanding's P99
		// TTFT is twice what it is on fresh ones.
		Tasks: []Task{{Check: func(s State, t Tables) TaskCheck {
			if t.Study == nil || !t.Study.Complete() || t.Study.Err != nil {
				return TaskCheck{}
			}
			r := t.Study.At(3, "ttft99") / t.Study.At(1, "ttft99")
			return TaskCheck{Done: r >= 2, Now: fmt.Sprintf("%.2f×", r)}
		}}},
	})
}

// routeStale is the age of the load figures the chapter's last row acts
// on: the student's, or half a second until they move it.
func routeStale(s State) float64 {
	if s.RouteStale > 0 {
		return s.RouteStale
	}
	return 0.5
}
