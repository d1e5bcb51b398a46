//go:build js && wasm

package play

import (
	"math"
	"testing"
)

// chapterState is the state a chapter opens with.
func chapterState(t *testing.T, ch Chapter) State {
	t.Helper()
	s := DefaultState()
	p, ok := PresetByName(ch.Preset)
	if !ok {
		t.Fatalf("chapter %s names unknown preset %q", ch.ID, ch.Preset)
	}
	p.Apply(&s)
	return s
}

// TestChapterOneIsTheLecture: the demo-1 chapter's table has the lecture's numbers.
func TestChapterOneIsTheLecture(t *testing.T) {
	ch, _, _ := ChapterByID("demo1")
	l, d, err := LectureOf(chapterState(t, ch))
	if err != nil {
		t.Fatal(err)
	}
	rows := l.Demo1(d.Batch, d.Context, d.Prompts)
	if math.Abs(rows[0].DecodeOnly*1e3-7.67) > 0.005 || math.Abs(rows[1].Mixed*1e3-14.90) > 0.011 || math.Abs(rows[3].DecodeSlowdown-7.23) > 0.005 {
		t.Errorf("demo 1: decode %.4f ms, +512 %.4f ms, 2048 slowdown %.3f; want 7.67, 14.90, 7.23", rows[0].DecodeOnly*1e3, rows[1].Mixed*1e3, rows[3].DecodeSlowdown)
	}
}

// TestChapterAnswersHold: each chapter's "right" option is what the
// simulation says at the chapter's own settings.
func TestChapterAnswersHold(t *testing.T) {
	for _, ch := range Chapters {
		s := chapterState(t, ch)
		s.Num["n"] = 1500
		res, err := RunLecture(s)
		if err != nil {
			t.Fatal(err)
		}
		got, vals, err := Reveal(ch, s, res)
		if err != nil {
			t.Fatalf("%s: %v", ch.ID, err)
		}
		if got != ch.Answer {
			t.Errorf("%s: the simulation picks option %d (%v), the chapter says %d", ch.ID, got, vals, ch.Answer)
		}
		for _, m := range ch.Moves {
			if _, ok := numIndex[m]; !ok {
				t.Errorf("%s moves unknown setting %q", ch.ID, m)
			}
		}
	}
}
