package play

import (
	"testing"

	"servelab/sim/lecture"
)

// taskAt checks chapter ch's first task at s, computing its table as the page does.
func taskAt(t *testing.T, ch Chapter, s State) TaskCheck {
	t.Helper()
	var res *lecture.Interference
	var lab *LabPair
	if ch.Study != nil {
		st := ch.Study.NewTable(s)
		if err := st.Fill(); err != nil {
			t.Fatal(err)
		}
		return ch.Tasks[0].Check(s, Tables{Study: st})
	}
	if ch.Demo == 0 {
		lp, err := RunLabPair(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		lab = &lp
	} else {
		r, err := RunLecture(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		res = r
	}
	return ch.Tasks[0].Check(s, Tables{Res: res, Lab: lab})
}

// TestTasksAreOpenAtThePresetAndReachable: every chapter ends with a task
// that its preset does not meet, and that the chapter's own moves (or a
// click on a row of its table) can meet: found here by trying the moves
// as a student would, the target being read from the live table.
func TestTasksAreOpenAtThePresetAndReachable(t *testing.T) {
	for _, ch := range Chapters {
		t.Run(ch.ID, func(t *testing.T) {
			if len(ch.Tasks) == 0 {
				t.Fatal("the chapter has no task")
			}
			for i := range ch.Tasks {
				for _, lang := range Langs() {
					if T(lang, ch.TaskKey(i)) == ch.TaskKey(i) {
						t.Errorf("%s: no text for %s", lang, ch.TaskKey(i))
					}
				}
			}
			s := chapterState(t, ch)
			c := taskAt(t, ch, s)
			if c.Done || c.Now == "" {
				t.Fatalf("at the preset: %+v; want open, with what the settings give now", c)
			}
			// Try what the chapter lets the student move.
			try := func(key string, vals ...float64) bool {
				for _, v := range vals {
					x := s
					if msg := x.SetNum(key, v); msg != "" {
						t.Fatalf("%s=%g: %s", key, v, msg)
					}
					if c := taskAt(t, ch, x); c.Done {
						t.Logf("met at %s=%g: %s", key, v, c.Now)
						return true
					}
				}
				return false
			}
			switch ch.ID {
			case "demo1":
				if !try("batch", 48, 64, 96, 128, 192, 256) {
					t.Error("no batch meets the task")
				}
			case "demo2":
				if msg := s.SetNum("prompt", 1024); msg != "" {
					t.Fatal(msg)
				}
				res, err := RunLecture(s, nil)
				if err != nil {
					t.Fatal(err)
				}
				var rates []float64
				for _, r := range res.Demo2 {
					rates = append(rates, r.Rate)
				}
				met := 0
				for _, r := range rates {
					x := s
					x.SetNum("rate", r)
					if taskAt(t, ch, x).Done {
						met++
					}
				}
				if met != 1 {
					t.Errorf("%d of the table's rates meet the task; want exactly one (the highest under 15 ms)", met)
				}
			case "demo3":
				if !try("slotpot", 12, 11, 10, 9, 8.5, 8) {
					t.Error("no TPOT objective meets the task")
				}
			case "demo4":
				if !try("budget", 256, 1024, 2048) {
					t.Error("no row of the table meets the task")
				}
			case "lab":
				if !try("budget", 1024, 512, 256) {
					t.Error("no budget meets the task")
				}
			case "cache":
				if !try("sys", 4000, 6000, 8000) {
					t.Error("no system prompt meets the task")
				}
			case "route":
				if !try("stale", 1000, 1500, 2000) {
					t.Error("no age of the load figures meets the task")
				}
			case "spec":
				if !try("spa", 0.8, 0.9, 0.95) {
					t.Error("no acceptance rate meets the task")
				}
			default:
				t.Errorf("no way to try chapter %s's task here", ch.ID)
			}
		})
	}
}
