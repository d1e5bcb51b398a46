package play

import (
	"fmt"
	"math"

	"servelab/sim/lecture"
)

// A Task ends a chapter: a target the student reaches by moving the
// chapter's settings (or picking a row of its table), checked live against
// the table the page shows. Its text is the catalogue key "ch.ID.taskN".
type Task struct {
	// Check reports whether the target is met at s, with the chapter's
	// current table, and what the settings give now, in numbers and units
	// (the same in every language).
	Check func(s State, t Tables) TaskCheck
}

// Tables are a chapter's tables as shown: the lecture's demos (Res), the
// lab's two runs (Lab) or a study's runs (Study); nil until computed.
type Tables struct {
	Res   *lecture.Interference
	Lab   *LabPair
	Study *StudyTable
}

// TaskCheck is a task's state at the current settings.
type TaskCheck struct {
	Done bool
	Now  string // what the settings give now ("1.94×", "48.35 ms"); "" when the table has nothing yet
}

// The lecture's chapters' tasks. Every target is computed from the table,
// not written in: a test checks that none is met at the chapter's preset
// and each can be met by the chapter's moves.
var (
	// Demo 1: a larger batch makes the decode step itself longer (more KV
	// to read), so the same prompt hides more of its compute under it.
	taskDemo1 = Task{Check: func(s State, t Tables) TaskCheck {
		if t.Res == nil {
			return TaskCheck{}
		}
		for _, r := range t.Res.Demo1 {
			if r.Prompt == 512 {
				return TaskCheck{Done: r.DecodeSlowdown <= 1.5, Now: fmt.Sprintf("%.2f×", r.DecodeSlowdown)}
			}
		}
		return TaskCheck{}
	}}
	// Demo 2: the highest rate the colocated GPU holds P90 TPOT under
	// 15 ms with 1024-token prompts; the student clicks that row.
	taskDemo2 = Task{Check: func(s State, t Tables) TaskCheck {
		res := t.Res
		if res == nil || len(res.Demo2) == 0 {
			return TaskCheck{}
		}
		best := -1.0
		for _, r := range res.Demo2 {
			if r.ColocatedTPOT90 < 0.015 {
				best = math.Max(best, r.Rate)
			}
		}
		now := fmt.Sprintf("%d tokens · %s req/s", s.Prompt, FormatNum(s.Rate))
		return TaskCheck{Done: s.Prompt == 1024 && best > 0 && s.Rate == best, Now: now}
	}}
	// Demo 3: a stricter TPOT objective hurts the colocated GPU far more
	// than a decode-only one.
	taskDemo3 = Task{Check: func(s State, t Tables) TaskCheck {
		res := t.Res
		if res == nil || res.Demo3.Colocated <= 0 && res.Demo3.Advantage == 0 {
			return TaskCheck{}
		}
		a := res.Demo3.Advantage
		return TaskCheck{Done: a >= 3, Now: fmt.Sprintf("%.1f×", a)}
	}}
	// Demo 4: P90 TTFT is not monotonic in the budget; the student finds
	// the budget with the lowest and clicks its row.
	taskDemo4 = Task{Check: func(s State, t Tables) TaskCheck {
		res := t.Res
		if res == nil || len(res.Demo4) == 0 {
			return TaskCheck{}
		}
		best, bestT := 0, math.Inf(1)
		for _, r := range res.Demo4 {
			if r.Budget > 0 && r.TTFTP90 < bestT {
				best, bestT = r.Budget, r.TTFTP90
			}
		}
		now := FormatNum(float64(s.EffectiveBudget()))
		if s.Policy != "chunked" {
			now = s.Policy
		}
		return TaskCheck{Done: s.Policy == "chunked" && s.Budget == best, Now: now}
	}}
	// The lab: the chunk budget that keeps every stream's worst gap under
	// 60 ms while a prompt of at least 32k tokens is prefilled.
	taskLab = Task{Check: func(s State, t Tables) TaskCheck {
		lab := t.Lab
		if lab == nil || lab.Chunked == nil || lab.Chunked.Lab == nil {
			return TaskCheck{}
		}
		w := lab.Chunked.Lab.WorstGap
		return TaskCheck{Done: s.Lab.LongInputLen >= 32000 && w < 0.060, Now: FormatDur(w)}
	}}
)

// TaskKey is the catalogue key of the chapter's task i (0-based).
func (ch Chapter) TaskKey(i int) string { return fmt.Sprintf("ch.%s.task%d", ch.ID, i+1) }
