// Package e2e starts the tiny lab (cmd/tinylab: llama.cpp through node-llama-cpp
// on this machine's CPU) at budget 256 and unchunked, and measures it with the
// unmodified lab script run.py and with `servelab measure`. It needs node, the
// npm install of `make tinylab-deps`, and python3.
package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"servelab/sim"
)

// The lab workload: run.py's flags, shortened. 2000 filler words are about
// 8000 tokens, whose prefill takes seconds on a CPU core.
var workload = []string{"--long-input-len", "2000", "--duration", "8", "--inject-after", "3", "--warmup", "1"}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// need fails (not skips) when a tool is missing: `make test` installs them.
func need(t *testing.T, root string) (node, python string) {
	t.Helper()
	var err error
	if node, err = exec.LookPath("node"); err != nil {
		t.Fatal("node is not on PATH")
	}
	if python, err = exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is not on PATH (it runs cmd/servelab/testdata/run.py)")
	}
	if _, err := os.Stat(filepath.Join(root, "cmd/tinylab/node_modules/@node-llama-cpp/linux-x64")); err != nil {
		t.Fatal("node-llama-cpp is not installed: run `make tinylab-deps`")
	}
	return node, python
}

// lab is one running tinylab server.
type lab struct {
	url  string
	cmd  *exec.Cmd
	logs *bytes.Buffer
	mu   *sync.Mutex
}

var listening = regexp.MustCompile(`on (http://127\.0\.0\.1:\d+);`)

func startLab(t *testing.T, node, root, model string, flags ...string) *lab {
	t.Helper()
	args := append([]string{filepath.Join(root, "cmd/tinylab/server.mjs"), "--model", model, "--port", "0"}, flags...)
	cmd := exec.Command(node, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{cmd: cmd, logs: &bytes.Buffer{}, mu: &sync.Mutex{}}
	cmd.Stderr = lockedWriter{l}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.stop)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lockedWriter{l}.Write([]byte(sc.Text() + "\n"))
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			cmd.Wait()
			t.Fatalf("tinylab %v exited before listening:\n%s", flags, l.log())
		}
		l.url = u
	case <-time.After(60 * time.Second):
		t.Fatalf("tinylab %v did not start in 60 s:\n%s", flags, l.log())
	}
	// Ready when /v1/models answers, as `make tinylab` promises.
	var m struct{ Data []struct{ ID string } }
	if code := getJSON(t, l.url+"/v1/models", &m); code != 200 || len(m.Data) != 1 || m.Data[0].ID != "tinylab" {
		t.Fatalf("/v1/models: %d %+v", code, m)
	}
	return l
}

type lockedWriter struct{ l *lab }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	return w.l.logs.Write(p)
}

func (l *lab) log() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.logs.String()
}

func (l *lab) stop() {
	if l.cmd.ProcessState == nil {
		l.cmd.Process.Signal(syscall.SIGTERM)
		l.cmd.Wait()
	}
}

// step is one engine step as the server records it.
type step struct {
	T       float64 // its start on the server's clock, s
	Dur     float64
	Decodes int
	Prefill int
	Piece   int // the most prompt tokens of one request in it
}

// stalls reports whether a step is the long prompt (~8000 tokens) entering
// whole beside running decodes. (The 16 short prompts that start run.py's
// load can carry as many tokens into one step, unchunked.)
func stalls(s step) bool { return wholeLong(s) && s.Decodes > 0 }

// wholeLong reports whether a step carried the long prompt whole. It
// stalls nothing when it comes as the streams, whose requests run in step,
// all start their next ones: then that step holds prompts only.
func wholeLong(s step) bool { return s.Piece >= 7000 }

// steps returns the server's recent steps and its per-step token budget.
func (l *lab) steps(t *testing.T) ([]step, int) {
	var s struct {
		Config struct {
			Budget int `json:"max_num_batched_tokens"`
		}
		Steps []step
	}
	if code := getJSON(t, l.url+"/tinylab/steps", &s); code != 200 {
		t.Fatalf("/tinylab/steps: %d", code)
	}
	return s.Steps, s.Config.Budget
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp.StatusCode
}

func postJSON(t *testing.T, url string, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// summary is the part of the lab script's JSON the checks read.
type summary struct {
	WorstGap float64 `json:"worst_gap"`
	LongTTFT float64 `json:"long_ttft"`
	QuietP50 float64 `json:"itl_quiet_p50"`
	// DuringP50 is the median gap while the long prompt prefilled.
	DuringP50 float64 `json:"itl_during_p50"`
	Tokens    int     `json:"tokens_observed"`
	Failed    int     `json:"short_failed"`
	LongFail  int     `json:"long_failed"`
	LongErr   string  `json:"long_error"`
}

func readSummary(t *testing.T, path string) summary {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Summary summary }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s := f.Summary
	if s.Tokens == 0 || s.Failed > 0 || s.LongFail > 0 {
		t.Fatalf("%s: %d tokens observed, %d short and %d long requests failed (%s)", path, s.Tokens, s.Failed, s.LongFail, s.LongErr)
	}
	return s
}

// tool runs run.py or servelab measure against a lab, writing JSON to out.
func tool(ctx context.Context, name string, argv []string, l *lab, label, out string, extra ...string) *exec.Cmd {
	args := append(append(argv[1:], "--base-url", l.url, "--label", label, "--json", out), workload...)
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, argv[0], args...)
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	return cmd
}

func runTools(t *testing.T, cmds ...*exec.Cmd) {
	t.Helper()
	outs := make([]bytes.Buffer, len(cmds))
	for i, c := range cmds {
		c.Stdout, c.Stderr = &outs[i], &outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(c.Args, " "), err, outs[i].String())
		}
	}
}

// checkAPI drives the OpenAI-compatible routes: stream and not, usage, max_tokens,
// errors in OpenAI's shape.
func checkAPI(t *testing.T, url string) {
	code, b := postJSON(t, url+"/v1/completions", `{"model":"tinylab","prompt":"12345 67890","max_tokens":5,"ignore_eos":true}`)
	var c struct {
		Choices []struct {
			Text         string
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			Completion int `json:"completion_tokens"`
			Prompt     int `json:"prompt_tokens"`
		}
	}
	if json.Unmarshal(b, &c); code != 200 || len(c.Choices) != 1 || c.Choices[0].Text == "" || c.Choices[0].FinishReason != "length" || c.Usage.Completion != 5 || c.Usage.Prompt < 3 {
		t.Errorf("completion: %d %s", code, b)
	}

	code, b = postJSON(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":7,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`)
	frames, content, usage, done, role := 0, 0, 0, false, false
	for _, line := range strings.Split(string(b), "\n") {
		p, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if p == "[DONE]" {
			done = true
			continue
		}
		frames++
		var ch struct {
			Choices []struct {
				Delta struct{ Role, Content string }
			}
			Usage *struct {
				Completion int `json:"completion_tokens"`
			}
		}
		if err := json.Unmarshal([]byte(p), &ch); err != nil {
			t.Fatalf("chat stream frame %q: %v", p, err)
		}
		if len(ch.Choices) == 1 && ch.Choices[0].Delta.Role == "assistant" {
			role = true
		}
		if len(ch.Choices) == 1 && ch.Choices[0].Delta.Content != "" {
			content++
		}
		if ch.Usage != nil && len(ch.Choices) == 0 {
			usage = ch.Usage.Completion
		}
	}
	if code != 200 || !done || !role || content != 7 || usage != 7 {
		t.Errorf("chat stream: status %d, %d frames, %d with content (want 7, one per token), usage %d, role %v, [DONE] %v\n%s", code, frames, content, usage, role, done, b)
	}

	var e struct {
		Error struct {
			Message, Type string
			Code          int
		}
	}
	long := strings.Repeat("12345 ", 4000)
	code, b = postJSON(t, url+"/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":16}`, long))
	if json.Unmarshal(b, &e); code != 400 || e.Error.Type != "BadRequestError" || e.Error.Code != 400 || !strings.Contains(e.Error.Message, "maximum context length is") {
		t.Errorf("a prompt over max_model_len: %d %s", code, b)
	}
	code, b = postJSON(t, url+"/v1/completions", `{"model":"nope","prompt":"x"}`)
	if json.Unmarshal(b, &e); code != 404 || !strings.Contains(e.Error.Message, "nope") {
		t.Errorf("an unknown model: %d %s", code, b)
	}
	code, b = postJSON(t, url+"/v1/completions", `{"prompt":"x","max_tokens":-1}`)
	if json.Unmarshal(b, &e); code != 400 || !strings.Contains(e.Error.Message, "max_tokens") {
		t.Errorf("max_tokens -1: %d %s", code, b)
	}
}

// readGaps returns a lab file's inter-token gaps, each ending at T seconds
// from that file's injection.
func readGaps(t *testing.T, path string) []sim.Gap {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Gaps []sim.Gap }
	if err := json.Unmarshal(b, &f); err != nil || len(f.Gaps) == 0 {
		t.Fatalf("%s: %v, %d gaps", path, err, len(f.Gaps))
	}
	slices.SortFunc(f.Gaps, func(a, b sim.Gap) int { return cmp.Compare(a.TRelInject, b.TRelInject) })
	return f.Gaps
}

// matchTol is how far apart two tools may time one frame on one clock: a
// python thread may read it some milliseconds late. Steps long enough to
// stretch a gap past twice the median end further apart than this.
const matchTol = 0.010

// longGaps returns the steps that stretched a gap past twice the median gap
// (steps that carried prefill, or that the machine slowed), one gap each:
// when the step ended (its first arrival) and the longest gap it ended.
func longGaps(gs []sim.Gap) []sim.Gap {
	gaps := make([]float64, len(gs))
	for i, g := range gs {
		gaps[i] = g.Gap
	}
	slices.Sort(gaps)
	long := 2 * gaps[len(gaps)/2]
	var steps []sim.Gap
	for _, g := range gs {
		switch n := len(steps); {
		case g.Gap <= long:
		case n > 0 && g.TRelInject-steps[n-1].TRelInject <= long:
			steps[n-1].Gap = max(steps[n-1].Gap, g.Gap)
		default:
			steps = append(steps, g)
		}
	}
	return steps
}

// sameStep reports whether two tools' long gaps, on one clock, are one step:
// they end together and are as long.
func sameStep(a, b sim.Gap) bool {
	return math.Abs(a.TRelInject-b.TRelInject) <= matchTol && math.Abs(a.Gap-b.Gap) <= max(matchTol, 0.1*a.Gap)
}

// clockOffset returns d such that a moment on b's clock is d later on a's,
// and how many of a's long gaps it lines up with b's: the two tools timed
// the same steps, so at the right offset their long gaps coincide in end
// and length. a and b are longGaps.
func clockOffset(a, b []sim.Gap) (float64, int) {
	matched := func(d float64) []float64 {
		var diffs []float64
		j := 0
		for _, x := range a {
			for j < len(b) && b[j].TRelInject+d < x.TRelInject-matchTol {
				j++
			}
			for k := j; k < len(b) && b[k].TRelInject+d <= x.TRelInject+matchTol; k++ {
				if sameStep(x, sim.Gap{TRelInject: b[k].TRelInject + d, Gap: b[k].Gap}) {
					diffs = append(diffs, x.TRelInject-b[k].TRelInject)
					break
				}
			}
		}
		return diffs
	}
	var best []float64
	for _, x := range a {
		for _, y := range b {
			if m := matched(x.TRelInject - y.TRelInject); len(m) > len(best) {
				best = m
			}
		}
	}
	if len(best) == 0 {
		return 0, 0
	}
	slices.Sort(best)
	return best[len(best)/2], len(best)
}

// sameGaps checks that run.py (py) and servelab measure (ms), run at once
// against one server, timed the same gaps over the same steps. On one clock
// (clockOffset), a gap of one tool is over the same steps as a gap of the
// other when both begin at one step's end and end at another's (within
// matchTol each): those two gaps timed one interval of the engine's, and
// must agree. A gap with no such twin is left out: the other tool had no
// stream waiting over exactly those steps (its stream was being prefilled,
// or its closed loop had not started or had ended: the two tools' runs
// span different windows, and only run.py injects the long prompt), or a
// python thread read a frame late. Each tool's longest twinned gap is then
// held to its twin, and must be a long step of the engine's (at least half
// the longest step it ran meanwhile, longest), so the check is not passed
// on the short gaps alone.
func sameGaps(t *testing.T, label string, py, ms []sim.Gap, longest float64) {
	t.Helper()
	lp, lm := longGaps(py), longGaps(ms)
	d, n := clockOffset(lp, lm)
	t.Logf("%s: %d of run.py's %d long gaps line up with servelab measure's %d, %.3f s later on run.py's clock", label, n, len(lp), len(lm), d)
	if n < 3 {
		t.Errorf("%s: the two tools' long gaps line up on %d steps only: they did not see the same steps", label, n)
		return
	}
	ms = slices.Clone(ms)
	for i := range ms {
		ms[i].TRelInject += d
	}
	// twin is y's gap over the same steps as g (ok false: none).
	twin := func(g sim.Gap, y []sim.Gap) (sim.Gap, bool) {
		k, _ := slices.BinarySearchFunc(y, g.TRelInject-matchTol, func(a sim.Gap, t float64) int { return cmp.Compare(a.TRelInject, t) })
		for ; k < len(y) && y[k].TRelInject <= g.TRelInject+matchTol; k++ {
			if math.Abs((y[k].TRelInject-y[k].Gap)-(g.TRelInject-g.Gap)) <= matchTol {
				return y[k], true
			}
		}
		return sim.Gap{}, false
	}
	tools := []struct {
		name string
		gs   []sim.Gap
	}{{"run.py", py}, {"servelab measure", ms}}
	for i, x := range tools {
		y := tools[1-i]
		var worst, other sim.Gap
		pairs := 0
		for _, g := range x.gs {
			if o, ok := twin(g, y.gs); ok {
				pairs++
				if g.Gap > worst.Gap {
					worst, other = g, o
				}
			}
		}
		t.Logf("%s: %d of %s's %d gaps have a twin over the same steps in %s's; the longest %.1f ms at %+.2f s, its twin %.1f ms (the engine's longest step %.1f ms)",
			label, pairs, x.name, len(x.gs), y.name, 1e3*worst.Gap, worst.TRelInject, 1e3*other.Gap, 1e3*longest)
		if worst.Gap < 0.5*longest {
			t.Errorf("%s: %s's longest gap over steps %s also timed is %.1f ms, under half the engine's longest step (%.1f ms): the tools did not time the long steps alike",
				label, x.name, y.name, 1e3*worst.Gap, 1e3*longest)
			continue
		}
		if !within(other.Gap, worst.Gap, 0.15) {
			t.Errorf("%s: over the same steps %s timed %.1f ms (at %+.2f s) and %s %.1f ms: want within 15%%",
				label, x.name, 1e3*worst.Gap, worst.TRelInject, y.name, 1e3*other.Gap)
		}
	}
}

func within(a, b, frac float64) bool { return a >= b*(1-frac) && a <= b*(1+frac) }

// TestLab is the lab on a CPU, measured once per configuration; its subtests
// check that chunked prefill bounds the stall to a chunk while unchunked the
// whole prompt stalls everyone, that the two measuring tools see the same
// gaps, and that a profile calibrated on one run predicts the other.
func TestLab(t *testing.T) {
	root := repoRoot(t)
	node, python := need(t, root)
	dir := t.TempDir()
	bin := filepath.Join(dir, "servelab")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd/servelab")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	model, hfConfig := filepath.Join(dir, "tinylab.gguf"), filepath.Join(dir, "config.json")
	if out, err := exec.Command(bin, "gguf", "-o", model, "--hf-config", hfConfig).CombinedOutput(); err != nil {
		t.Fatalf("servelab gguf: %v\n%s", err, out)
	}
	runPy := []string{python, filepath.Join(root, "cmd/servelab/testdata/run.py")}
	measure := []string{bin, "measure", "--quiet"}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	labels := []string{"chunked", "unchunked"}
	flags := map[string][]string{"chunked": {"--max-num-batched-tokens", "256"}, "unchunked": {"--no-enable-chunked-prefill"}}
	// The two labs run at once (below): each gets its share of the cores
	// but one, so that neither's threads wait on a core the other holds.
	threads := fmt.Sprint(max(1, (runtime.NumCPU()-1)/2))
	labs := map[string]*lab{}
	for _, label := range labels {
		labs[label] = startLab(t, node, root, model, append(flags[label], "--threads", threads)...)
	}
	checkAPI(t, labs["chunked"].url)
	p := func(label, s string) string { return filepath.Join(dir, label+"-"+s+".json") }
	// lastStep is when the latest step a lab ran began, on its clock.
	lastStep := func(l *lab) float64 {
		s, _ := l.steps(t)
		if len(s) == 0 {
			return -1
		}
		return s[len(s)-1].T
	}
	// stepsAfter returns a lab's steps that began after t0 (lastStep's).
	stepsAfter := func(l *lab, t0 float64) []step {
		s, _ := l.steps(t)
		return slices.DeleteFunc(s, func(s step) bool { return s.T <= t0 })
	}
	// together measures a lab with both tools at once, 8 streams each, one
	// long prompt (run.py's): they see the same steps, so each tool's worst
	// gap is the same event seen twice. Run one after the other, the two
	// worst gaps would differ by the machine's own noise as well (a busy
	// shared CPU stretches a step now and then), which says nothing about
	// the tools. It returns the engine's steps meanwhile.
	together := func(label string) []step {
		l := labs[label]
		t0 := lastStep(l)
		runTools(t,
			tool(ctx, "run.py", runPy, l, label, p(label, "py"), "--short-concurrency", "8"),
			tool(ctx, "measure", measure, l, label, p(label, "ms"), "--short-concurrency", "8", "--long-count", "0"))
		return stepsAfter(l, t0)
	}
	type result struct {
		py, ms, alone summary
		most          int     // the most tokens one step carried
		longest       float64 // the longest step, s
		// The engine's steps during the run with both tools and during
		// measure's alone.
		together, aloneSteps []step
	}
	res := map[string]*result{"chunked": {}, "unchunked": {}}
	res["chunked"].together = together("chunked")
	// One tool alone against each lab, with the lab workload's 16 streams:
	// the runs a profile is fitted to and predicts, since each file says the
	// load it ran. They run at the same time: a shared machine's speed moves
	// from one run to the next as its other work comes and goes, and a
	// profile fitted in one run predicts another only when the machine was as
	// fast; at once, both meet the same load. The tool is servelab measure:
	// on a busy machine run.py's python threads read frames late, and the
	// quiet gaps the overhead is fitted to grew with them (fits 35-59% off
	// at load 8-10 on 2 cores). The long prompt comes 5 s in: the 16 prompts
	// that start the load enter whole unchunked, and on a busy machine took
	// over 3 s, leaving no quiet gaps to calibrate on. Each stream asks for
	// 512 tokens, not run.py's 256: the 16 streams start and end in lockstep,
	// and with 256 their first requests ended during the long prefill, at a
	// moment that moved from run to run; a stream that ended waits behind the
	// long prompt, so the gaps of the prefill's later, longer chunks counted
	// fewer streams, and the measured median stall moved 78-123 ms between
	// runs on one machine while the simulation's stayed at 120 ms.
	t0 := map[string]float64{}
	var cmds []*exec.Cmd
	for _, label := range labels {
		t0[label] = lastStep(labs[label])
		cmds = append(cmds, tool(ctx, "measure", measure, labs[label], label, p(label, "alone"), "--duration", "10", "--inject-after", "5", "--short-output-len", "512"))
	}
	runTools(t, cmds...)
	perWord := map[string]string{}
	for _, label := range labels {
		res[label].aloneSteps = stepsAfter(labs[label], t0[label])
		perWord[label] = tokensPerWord(t, labs[label].url, p(label, "alone"))
	}
	res["unchunked"].together = together("unchunked")
	budgets := map[string]int{}
	for _, label := range labels {
		r, l := res[label], labs[label]
		r.py, r.ms, r.alone = readSummary(t, p(label, "py")), readSummary(t, p(label, "ms")), readSummary(t, p(label, "alone"))
		steps, budget := l.steps(t)
		budgets[label] = budget
		for _, s := range steps {
			r.most = max(r.most, s.Decodes+s.Prefill)
			r.longest = max(r.longest, s.Dur)
		}
		t.Logf("%-9s measure alone: worst gap %6.1f ms, long TTFT %5.0f ms, quiet ITL p50 %4.1f ms | together: worst gap run.py %6.1f ms, measure %6.1f ms | longest step %6.1f ms",
			label, 1e3*r.alone.WorstGap, 1e3*r.alone.LongTTFT, 1e3*r.alone.QuietP50, 1e3*r.py.WorstGap, 1e3*r.ms.WorstGap, 1e3*r.longest)
		l.stop()
	}
	c, u := *res["chunked"], *res["unchunked"]

	t.Run("chunking bounds the stall", func(t *testing.T) {
		// The engine's own step record: chunked steps stay within the budget;
		// unchunked, the long prompt entered in one step.
		if c.most > 256 {
			t.Errorf("chunked at 256: a step carried %d tokens", c.most)
		}
		if u.most < 7000 {
			t.Errorf("unchunked: the largest step carried %d tokens, want the whole long prompt (~8000)", u.most)
		}
		if u.alone.LongTTFT < 1 {
			t.Errorf("the unchunked long prefill took %.2f s (its long TTFT), want >= 1 s: raise --long-input-len", u.alone.LongTTFT)
		}
		// What each tool measured, against the engine's steps in the same
		// run (a busy machine can stretch any one step, several times over:
		// the stall is judged against the steps it ran then, not against
		// another run's). Every decode gets a token each step, so the worst
		// gap is one step: chunked, at most the longest step, each within
		// the budget; unchunked, the step that carried the whole long prompt
		// stalled every stream. servelab measure stamps frames with the
		// kernel's receive time; run.py when a python thread gets to them,
		// which on a busy machine was seen 0.37 s late.
		for _, x := range []struct {
			label, tool string
			s           summary
			steps       []step
		}{
			{"chunked", "measure (alone)", c.alone, c.aloneSteps}, {"chunked", "run.py (together)", c.py, c.together}, {"chunked", "measure (together)", c.ms, c.together},
			{"unchunked", "measure (alone)", u.alone, u.aloneSteps}, {"unchunked", "run.py (together)", u.py, u.together}, {"unchunked", "measure (together)", u.ms, u.together},
		} {
			longest, prompt := 0.0, 0.0
			for _, s := range x.steps {
				longest = max(longest, s.Dur)
				if stalls(s) {
					prompt = max(prompt, s.Dur)
				}
			}
			if late := pythonLate(x.tool); x.s.WorstGap > 1.25*longest+late {
				t.Errorf("%s, %s: worst gap %.1f ms, the longest step %.1f ms: a gap spanned more than one step", x.label, x.tool, 1e3*x.s.WorstGap, 1e3*longest)
			}
			if x.label == "unchunked" && !(x.s.WorstGap >= 0.85*prompt) {
				t.Errorf("%s, %s: worst gap %.1f ms, the long prompt's step %.1f ms: it did not stall every stream", x.label, x.tool, 1e3*x.s.WorstGap, 1e3*prompt)
			}
		}
		// And the long prompt's one step costs many chunks' steps: against the
		// median step that carried a chunk, which one stretched step does not move.
		var chunks []float64
		for _, s := range append(slices.Clone(c.together), c.aloneSteps...) {
			if s.Prefill >= 128 {
				chunks = append(chunks, s.Dur)
			}
		}
		prompts := []float64{}
		for _, s := range append(slices.Clone(u.together), u.aloneSteps...) {
			if wholeLong(s) {
				prompts = append(prompts, s.Dur)
			}
		}
		if len(chunks) == 0 || len(prompts) != 2 {
			t.Fatalf("%d chunked steps carried a chunk, %d unchunked steps the long prompt (want 2, one per run)", len(chunks), len(prompts))
		}
		slices.Sort(chunks)
		chunk := chunks[len(chunks)/2]
		if r := slices.Min(prompts) / chunk; r < 4 {
			t.Errorf("the long prompt's step took %.1f ms, %.1fx the median chunk step (%.1f ms), want >= 4x", 1e3*slices.Min(prompts), r, 1e3*chunk)
		}
		t.Logf("the long prompt's step %.0f and %.0f ms unchunked, the median chunk step %.1f ms", 1e3*prompts[0], 1e3*prompts[1], 1e3*chunk)
	})

	t.Run("measure and run.py agree", func(t *testing.T) {
		// Each tool's whole-run worst gap is not comparable: their windows
		// differ (python starts later, each closed loop ends when its own
		// last request does, and only run.py injects the long prompt), and a
		// step stretched by the busy machine in one window only is one tool's
		// worst gap alone. So the files are put on one clock and compared
		// over the same steps (sameGaps).
		for _, label := range labels {
			longest := 0.0 // the longest step that held streams waiting
			for _, s := range res[label].together {
				if s.Decodes > 0 {
					longest = max(longest, s.Dur)
				}
			}
			sameGaps(t, label, readGaps(t, p(label, "py")), readGaps(t, p(label, "ms")), longest)
		}
	})

	t.Run("calibrated on unchunked, the simulation predicts chunked", func(t *testing.T) {
		// The unchunked engine is chunked prefill with a budget the longest
		// prompt fits in beside every decode, which is what the server does.
		if u.alone.QuietP50 == 0 {
			load, _ := os.ReadFile("/proc/loadavg")
			burst := 0.0
			for _, s := range u.aloneSteps {
				if s.Prefill >= 7000 && !stalls(s) {
					burst = max(burst, s.Dur)
				}
			}
			t.Fatalf("the unchunked run had no gap before the injection to calibrate on: the 16 prompts that start it enter in one step as large as the long prompt, which took %.1f s, longer than the 5 s before the injection; the machine is too busy (load average %s)",
				burst, strings.TrimSpace(string(load)))
		}
		// The files' prompt lengths are words; each command reads them as
		// tokens at the server's own count (--tokens-per-word).
		fit, pred := fitAndPredict(t, bin, filepath.Join(root, "cmd/tinylab/cpu-base.json"), hfConfig,
			p("unchunked", "alone"), []string{"--policy", "chunked", "--budget", fmt.Sprint(budgets["unchunked"]), "--tokens-per-word", perWord["unchunked"]},
			p("chunked", "alone"), []string{"--policy", "chunked", "--budget", "256", "--tokens-per-word", perWord["chunked"]})
		t.Logf("calibrated on unchunked: eff_compute %v, overhead %v s; predicted chunked worst gap %.1f ms (measured %.1f), median gap during the long prefill %.1f ms (measured %.1f), long TTFT %.0f ms (measured %.0f)",
			fit["eff_compute"], fit["overhead"], 1e3*pred.WorstGap, 1e3*c.alone.WorstGap, 1e3*pred.DuringP50, 1e3*c.alone.DuringP50, 1e3*pred.LongTTFT, 1e3*c.alone.LongTTFT)
		keep(t, dir)
		// The stall chunked prefill bounds is a chunk's step: the gaps while the
		// long prompt's chunks run, each step one chunk. Their median is that
		// step as the engine ran it; the worst gap is also whatever a busy
		// machine did to the slowest of some hundred steps (seen 2.3 s for a
		// 0.1 s step at load 10 on two cores), which a profile cannot
		// foresee, so it is held only to be no shorter than predicted.
		// The two runs are a minute apart on a shared CPU whose speed moves
		// (another job, a frequency change): the same prediction came within
		// 2% of one run and 42% of another on this two-core machine under
		// load. 50% still fails a model off by half or twice.
		const tol = 0.5
		if !within(pred.DuringP50, c.alone.DuringP50, tol) {
			t.Errorf("the simulated chunked stall (median gap during the long prefill) is %.1f ms, measured %.1f ms: want within %.0f%%", 1e3*pred.DuringP50, 1e3*c.alone.DuringP50, 100*tol)
		}
		if !within(pred.LongTTFT, c.alone.LongTTFT, tol) {
			t.Errorf("the simulated chunked long TTFT is %.0f ms, measured %.0f ms: want within %.0f%%", 1e3*pred.LongTTFT, 1e3*c.alone.LongTTFT, 100*tol)
		}
		// (The fit's own tolerance, as the median and the TTFT are held to.)
		if c.alone.WorstGap < (1-tol)*pred.WorstGap {
			t.Errorf("the simulated chunked worst gap is %.1f ms, measured %.1f ms: want no less than %.0f%% of it", 1e3*pred.WorstGap, 1e3*c.alone.WorstGap, 100*(1-tol))
		}
	})
}

// pythonLate is how late a tool may read a frame, on a busy machine, beyond
// the 25% the checks allow: servelab measure uses the kernel's receive
// time; run.py's python threads were seen 0.37 s late at load 10 on 2 cores.
func pythonLate(tool string) float64 {
	if strings.HasPrefix(tool, "run.py") {
		return 0.5
	}
	return 0
}

// tokensPerWord returns the prompt tokens per word the lab server counts
// (its usage) for a prompt of the lab file's long_input_len filler words,
// for --tokens-per-word: the lab script writes its lengths in words, and
// this tokenizer makes about four tokens of a five-digit word.
func tokensPerWord(t *testing.T, url, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Config struct {
			Long int `json:"long_input_len"`
		}
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Config.Long < 1 {
		t.Fatalf("%s: long_input_len %d, %v", file, f.Config.Long, err)
	}
	words := f.Config.Long
	code, body := postJSON(t, url+"/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":1}`, strings.TrimSpace(strings.Repeat("12345 ", words))))
	var r struct {
		Usage struct {
			Prompt int `json:"prompt_tokens"`
		}
	}
	if json.Unmarshal(body, &r); code != 200 || r.Usage.Prompt < words {
		t.Fatalf("counting the tokens of %d words: %d %s", words, code, body)
	}
	return strconv.FormatFloat(float64(r.Usage.Prompt)/float64(words), 'g', -1, 64)
}

// fitAndPredict fits a profile for the tiny lab on the CPU to one run (file,
// run under the engine flags fitOn) with servelab calibrate, then simulates
// the other run's workload (like, under predictOn) with it.
func fitAndPredict(t *testing.T, bin, base, hfConfig, file string, fitOn []string, like string, predictOn []string) (fit map[string]any, predicted summary) {
	t.Helper()
	prof := strings.TrimSuffix(file, ".json") + "-profile.json"
	hw := []string{"--model-config", hfConfig, "--gpu", "CPU-core", "--max-seqs", "20"}
	// The base is the tiny lab's profile: its first guesses are a CPU core's
	// (from the lecture's GPU values the figures are 5x off), and it fits
	// eff_compute and the overhead, eff_mem kept: with all three free the
	// decode figures cannot tell eff_mem from the overhead, and with
	// eff_compute and eff_mem free the fit kept eff_compute on 2 of 5 runs.
	args := append(append([]string{"calibrate", file, "-o", prof, "--json", "--base", base}, hw...), fitOn...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("servelab %s: %v\n%s", strings.Join(args, " "), err, stderrOf(err))
	}
	if err := json.Unmarshal(out, &fit); err != nil {
		t.Fatalf("calibrate --json: %v\n%s", err, out)
	}
	if ni, _ := fit["not_identified"].([]any); len(ni) > 0 {
		t.Errorf("calibrate did not identify: %v", ni)
	}
	args = append(append([]string{"sim", "--like", like, "--json", "--profile", prof}, hw...), predictOn...)
	if out, err = exec.Command(bin, args...).Output(); err != nil {
		t.Fatalf("servelab %s: %v\n%s", strings.Join(args, " "), err, stderrOf(err))
	}
	if err := json.Unmarshal(out, &predicted); err != nil {
		t.Fatalf("sim --json: %v\n%s", err, out)
	}
	return fit, predicted
}

func stderrOf(err error) string {
	if e, ok := err.(*exec.ExitError); ok {
		return string(e.Stderr)
	}
	return ""
}

// keep copies the runs' files and the fitted profile to $TINYLAB_E2E_KEEP
// when it is set, to look at or to ship a profile measured on this machine.
func keep(t *testing.T, dir string) {
	to := os.Getenv("TINYLAB_E2E_KEEP")
	if to == "" {
		return
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(to, filepath.Base(f)), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("kept %d files in %s", len(files), to)
}
