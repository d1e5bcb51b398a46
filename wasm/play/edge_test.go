package play

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"servelab/sim"
	"servelab/sim/lab"
)

// fakeServer answers the loop's requests on a virtual clock: each stream
// sends a token every `tick` seconds, except that the long prompt's prefill
// stalls every stream for `stall` seconds from the moment it arrives.
type fakeServer struct {
	tick, stall float64
}

type pending struct {
	id   int
	long bool
	left int
	next float64
}

func runLoop(t *testing.T, l *Loop, srv fakeServer, status func(id int) int) *lab.Measured {
	t.Helper()
	now := 100.0
	var inflight []*pending
	add := func(ls []Launch) {
		for _, x := range ls {
			var b struct {
				MaxTokens     int             `json:"max_tokens"`
				Stream        bool            `json:"stream"`
				IgnoreEOS     bool            `json:"ignore_eos"`
				StreamOptions map[string]bool `json:"stream_options"`
				Prompt        string          `json:"prompt"`
			}
			if err := json.Unmarshal(x.Body, &b); err != nil || !b.Stream || !b.IgnoreEOS || !b.StreamOptions["include_usage"] || b.Prompt == "" {
				t.Fatalf("request body %s", x.Body)
			}
			inflight = append(inflight, &pending{id: x.ID, long: x.Long, left: b.MaxTokens, next: now + srv.tick})
		}
	}
	add(l.Start(now))
	stallUntil := 0.0
	for steps := 0; !l.Done(); steps++ {
		if steps > 1e6 {
			t.Fatalf("the loop never finished: now %g, %d pending, in flight %v, stopped %q", now, len(inflight), l.InFlight(), l.Stopped())
		}
		for _, x := range l.Tick(now) {
			stallUntil = now + srv.stall
			add([]Launch{x})
		}
		// The next event: the earliest token due.
		next := math.Inf(1)
		for _, p := range inflight {
			next = math.Min(next, math.Max(p.next, stallUntil))
		}
		if _, ok := l.Inject(); !ok {
			if loading, t0 := l.Loading(); loading {
				next = math.Min(next, t0+l.Cfg.InjectAfter)
			}
		}
		now = next
		// Requests sent while this instant is handled join after it.
		before := len(inflight)
		var keep []*pending
		for _, p := range inflight[:before] {
			if math.Max(p.next, stallUntil) > now {
				keep = append(keep, p)
				continue
			}
			if st := status(p.id); st != 200 {
				_, ls := l.End(p.id, now, st, "")
				add(ls)
				continue
			}
			p.left--
			data := fmt.Sprintf("data: {\"choices\":[{\"text\":\"t\"}],\"usage\":{\"completion_tokens\":%d}}\n\n", 1)
			if p.left == 0 {
				data += "data: {\"choices\":[],\"usage\":{\"completion_tokens\":1}}\n\ndata: [DONE]\n\n"
			}
			// Split every frame in two chunks read at the same instant.
			l.Chunk(p.id, []byte(data[:7]), now)
			l.Chunk(p.id, []byte(data[7:]), now)
			if p.left == 0 {
				_, ls := l.End(p.id, now, 200, "")
				add(ls)
				continue
			}
			p.next = now + srv.tick
			keep = append(keep, p)
		}
		inflight = append(keep, inflight[before:]...)
	}
	return l.Result()
}

func testLoopConfig() lab.Config {
	c := lab.DefaultConfig()
	c.Model, c.Label, c.Warmup = "m", "edge-test", 1
	c.ShortConcurrency, c.ShortInputLen, c.ShortOutputLen = 3, 8, 10
	c.LongInputLen, c.LongOutputLen, c.LongCount = 50, 2, 1
	c.Duration, c.InjectAfter = 2, 0.5
	return c
}

func TestLoopClosedLoopAndSummary(t *testing.T) {
	l, err := NewLoop(testLoopConfig())
	if err != nil {
		t.Fatal(err)
	}
	m := runLoop(t, l, fakeServer{tick: 0.02, stall: 0.3}, func(int) int { return 200 })
	s := m.Summary
	// Every short stream keeps running until the duration: 3 streams of 10
	// tokens at 20 ms are 5 requests a second each, less the stall.
	if s.ShortCompleted < 3*8 || s.ShortFailed != 0 || s.LongFailed != 0 {
		t.Errorf("short completed %d failed %d, long failed %d", s.ShortCompleted, s.ShortFailed, s.LongFailed)
	}
	// The stall is the worst gap: 0.3 s plus up to one tick, right after injection.
	if s.WorstGap < 0.3 || s.WorstGap > 0.32+1e-9 || s.WorstGapOffset < 0 || s.WorstGapOffset > 0.35 {
		t.Errorf("worst gap %g at %+g, want the 0.3 s stall just after injection", s.WorstGap, s.WorstGapOffset)
	}
	if math.Abs(s.ITLQuietP50-0.02) > 1e-9 {
		t.Errorf("quiet p50 %g, want the 20 ms tick", s.ITLQuietP50)
	}
	// The summary is lab.Summarise of the gaps: recompute from the file.
	again := lab.Summarise(lab.Run{Label: s.Label, BaseURL: s.BaseURL, ShortConcurrency: 3, LongInputLen: 50,
		Arrivals: m.Arrivals(), Long: []lab.StreamResult{{OK: true, TTFT: s.LongTTFT}}, Short: m.Extra.Requests[:0], Wall: s.Wall})
	if again.WorstGap != s.WorstGap || again.ITLP99 != s.ITLP99 || again.TokensObserved != s.TokensObserved {
		t.Errorf("summary %+v differs from lab.Summarise of its gaps %+v", s, again)
	}
	// Each completed short request gives 9 gaps (its first token is none).
	if s.TokensObserved != 9*s.ShortCompleted {
		t.Errorf("tokens observed %d for %d completed short requests of 10 tokens", s.TokensObserved, s.ShortCompleted)
	}
	if m.Extra.Interrupted || len(m.Extra.Frames) == 0 || m.Config.Warmup != 1 {
		t.Errorf("extra %+v, config %+v", m.Extra.Interrupted, m.Config)
	}
	if _, err := json.Marshal(m); err != nil {
		t.Fatal(err)
	}
}

func TestLoopStopsOnRepeatedFailures(t *testing.T) {
	l, err := NewLoop(testLoopConfig())
	if err != nil {
		t.Fatal(err)
	}
	// The warmup (id 0) and the first 3 load requests work; then every request gets 429.
	m := runLoop(t, l, fakeServer{tick: 0.02}, func(id int) int {
		if id < 4 {
			return 200
		}
		return 429
	})
	if l.Stopped() == "" || !strings.Contains(l.Stopped(), "HTTP 429") || !m.Extra.Interrupted {
		t.Errorf("stopped %q, interrupted %v", l.Stopped(), m.Extra.Interrupted)
	}
	if m.Summary.ShortFailed < maxFailRun || m.Summary.ShortCompleted != 3 {
		t.Errorf("short failed %d completed %d", m.Summary.ShortFailed, m.Summary.ShortCompleted)
	}
}

func TestLoopRejectsBadWorkload(t *testing.T) {
	c := testLoopConfig()
	c.InjectAfter = c.Duration
	if _, err := NewLoop(c); err == nil {
		t.Error("inject-after = duration accepted")
	}
	c = testLoopConfig()
	c.Model = ""
	if _, err := NewLoop(c); err == nil {
		t.Error("no model accepted")
	}
}

func TestEdgeWorkloadFitsLimits(t *testing.T) {
	s := DefaultState()
	s.Workload = "lab"
	ApplyEdgeDefaults(&s, func(string) bool { return false })
	if s.Lab.ShortConcurrency != 4 || s.Lab.Duration != 10 {
		t.Fatalf("edge defaults not applied: %v", s.Lab)
	}
	s.SetNum("long", 32000)
	s.SetNum("streams", 16)
	w, notes := EdgeWorkload(s, EdgeLimits{MaxBodyBytes: 65536, MaxTokens: 128}, 6)
	if w.ShortOutputLen != 128 || w.LongInputLen*6+512 > 65536 || w.ShortConcurrency != 5 || len(notes) != 3 {
		t.Errorf("workload %+v, notes %q", w, notes)
	}
	// The body the loop sends for that long prompt fits the limit.
	c := lab.DefaultConfig()
	c.LabWorkload, c.Model = w, "some-model-name"
	if _, err := NewLoop(c); err != nil {
		t.Fatal(err)
	}
	c.Warmup = 0
	l, err := NewLoop(c)
	if err != nil {
		t.Fatal(err)
	}
	l.Start(0)
	if ls := l.Tick(c.InjectAfter); len(ls) != 1 || int64(len(ls[0].Body)) > 65536 {
		t.Errorf("long request body %d bytes", len(ls[0].Body))
	}
}

func TestLoopStopCancelsInFlight(t *testing.T) {
	c := testLoopConfig()
	c.Warmup = 0
	l, err := NewLoop(c)
	if err != nil {
		t.Fatal(err)
	}
	ls := l.Start(0)
	l.Chunk(ls[0].ID, []byte("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\n"), 0.1)
	l.Stop("stopped")
	if l.Done() {
		t.Fatal("done with requests in flight")
	}
	for _, id := range l.InFlight() {
		if _, next := l.End(id, 0.2, 200, Interrupted); len(next) != 0 {
			t.Errorf("a stopped loop sent %d more requests", len(next))
		}
	}
	if !l.Done() || len(l.InFlight()) != 0 {
		t.Fatal("not done after every request ended")
	}
	m := l.Result()
	// Aborted requests are neither completed nor failed; the frame read before counts.
	if m.Summary.ShortFailed != 0 || m.Summary.ShortCompleted != 0 || m.Summary.TokensObserved != 1 || !m.Extra.Interrupted {
		t.Errorf("summary %+v, interrupted %v", m.Summary, m.Extra.Interrupted)
	}
	if n := l.Tick(5); len(n) != 0 {
		t.Errorf("a stopped loop injected %d long prompts", len(n))
	}
}

// TestLoopIgnoresUsageBeyondMaxTokens: the page counts a response whose
// usage says more than max_tokens by its frames and warns, as servelab
// measure does (both read through lab.StreamReader).
func TestLoopIgnoresUsageBeyondMaxTokens(t *testing.T) {
	c := testLoopConfig()
	c.Warmup = 0
	l, err := NewLoop(c)
	if err != nil {
		t.Fatal(err)
	}
	ls := l.Start(0)
	l.Chunk(ls[0].ID, []byte("data: {\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":1}}\n\n"+
		"data: {\"choices\":[{\"text\":\"b\"}],\"usage\":{\"completion_tokens\":9223372036854775807}}\n\ndata: [DONE]\n\n"), 0.1)
	l.Stop("stopped")
	for _, id := range l.InFlight() {
		if id == ls[0].ID {
			l.End(id, 0.2, 200, "")
		} else {
			l.End(id, 0.2, 200, Interrupted)
		}
	}
	m := l.Result()
	if len(m.Extra.Requests) != 1 || m.Extra.Requests[0].Tokens != 2 || !m.Extra.Requests[0].OK {
		t.Errorf("requests %+v, want one of 2 tokens", m.Extra.Requests)
	}
	if w := strings.Join(m.Extra.Warnings, "\n"); !strings.Contains(w, "more completion_tokens than max_tokens") {
		t.Errorf("warnings:\n%s", w)
	}
}

// The edge's defaults replace the lab script's only where nobody chose the
// value: a link's own lengths (under their old names too) and a student's
// pick that happens to equal the lab's default are kept.
func TestEdgeDefaultsKeepChoices(t *testing.T) {
	d := sim.DefaultLab()
	q := fmt.Sprintf("?workload=lab&output=%d&streams=%d", d.ShortOutputLen, d.ShortConcurrency)
	s, _ := ParseQuery(strings.TrimPrefix(q, "?"))
	chosen := QueryKeys(q)
	chosen["longout"] = true // a slider moved to the lab's default
	ApplyEdgeDefaults(&s, func(k string) bool { return chosen[k] })
	w, e := s.Lab, EdgeDefaults
	if w.ShortOutputLen != d.ShortOutputLen || w.ShortConcurrency != d.ShortConcurrency || w.LongOutputLen != d.LongOutputLen {
		t.Errorf("chosen values replaced: sout %d, streams %d, longout %d; want the lab's %d, %d, %d",
			w.ShortOutputLen, w.ShortConcurrency, w.LongOutputLen, d.ShortOutputLen, d.ShortConcurrency, d.LongOutputLen)
	}
	if w.ShortInputLen != e.ShortInputLen || w.LongInputLen != e.LongInputLen || w.Duration != e.Duration || w.InjectAfter != e.InjectAfter {
		t.Errorf("values nobody chose kept the lab's: %+v, want the edge's %+v", w, e)
	}
	if QueryKeys("") != nil || !QueryKeys("?workload=lab&prompt=64")["sin"] || QueryKeys("?prompt=64")["sin"] {
		t.Error("QueryKeys: a lab link's prompt is its sin, another link's is not")
	}
}
