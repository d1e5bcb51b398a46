package play

import (
	"sort"
	"testing"
	"time"
)

// BenchmarkChapterMoves replays site/e2e's BenchmarkChapterTables slider
// moves in the browser's runtime without a page: per chapter, the CPU its
// table costs after each move when the jobs go through the chapter's cache
// as on the page (a value shown before costs nearly nothing), p50 over all
// moves and over the values not shown before.
func BenchmarkChapterMoves(b *testing.B) {
	moves := []struct {
		chapter, key string
		vals         []float64
	}{
		{"demo2", "prompt", []float64{448, 512, 384, 576, 320, 512}},
		{"demo3", "slotpot", []float64{20, 15, 25, 12, 18, 15}},
		{"demo4", "rate", []float64{35, 40, 45, 30, 38, 42}},
		{"lab", "budget", []float64{1024, 2048, 512, 4096, 1536, 2048}},
		{"lab", "long", []float64{32512, 31488, 33024, 30976, 33536, 32000}},
	}
	for _, m := range moves {
		ch, _, _ := ChapterByID(m.chapter)
		open, _ := ParseQuery("chapter=" + ch.ID + "&preset=" + ch.Preset)
		b.Run(m.chapter+"-"+m.key, func(b *testing.B) {
			var all, fresh []float64
			for b.Loop() {
				c := &LectureCache{}
				table(b, ch, open, c)
				c0, _ := ControlByKey(m.key)
				seen := map[float64]bool{c0.Value(open): true}
				for _, v := range m.vals {
					s := open.Clone()
					s.SetNum(m.key, v)
					t := time.Now()
					table(b, ch, s, c)
					ms := float64(time.Since(t).Microseconds()) / 1e3
					all = append(all, ms)
					if !seen[v] {
						fresh = append(fresh, ms)
					}
					seen[v] = true
				}
			}
			sort.Float64s(all)
			sort.Float64s(fresh)
			b.ReportMetric(all[len(all)/2], "ms-move-p50")
			b.ReportMetric(fresh[len(fresh)/2], "ms-new-p50")
		})
	}
}

// table computes a chapter's table for s as the page does: its demo's jobs
// (demo 3 with its splits) or the lab's two sides, through c.
func table(b *testing.B, ch Chapter, s State, c *LectureCache) {
	if ch.Demo == 0 {
		for _, chunked := range []bool{false, true} {
			if _, err := c.LabSide(s, nil, chunked); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	l, d, err := LectureOf(s)
	if err != nil {
		b.Fatal(err)
	}
	res, jobs := l.Interference(d)
	for _, j := range jobs {
		if j.Demo == ch.Demo {
			if _, err := c.RunJob(l, j); err != nil {
				b.Fatal(err)
			}
		}
	}
	if ch.Demo == 3 {
		for _, j := range l.Demo3Splits(res) {
			if _, err := c.RunJob(l, j); err != nil {
				b.Fatal(err)
			}
		}
	}
}
