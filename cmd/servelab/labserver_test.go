package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"servelab/cmd/internal/labclient"
	"servelab/cmd/internal/labserver"
	"servelab/sim"
	labfile "servelab/sim/lab"
)

// python3 finds the interpreter the lab script needs; CI installs it (.ci/run).
func python3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is required to run the lab script run.py against the lab server; .ci/run installs it (apt-get install -y python3)")
	}
	return p
}

// labEngine is the engine configuration both the lab server and the
// prediction use: Llama-3.1-8B on an H100, idealised (no memory limits).
func labEngine(t *testing.T, policy string, budget int) sim.Config {
	t.Helper()
	step, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.NewPolicy(policy, budget)
	if err != nil {
		t.Fatal(err)
	}
	return sim.Config{Step: step, Policy: p}
}

func startLab(t *testing.T, cfg labserver.Config) string {
	t.Helper()
	s, err := labserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		// The server's own timing, to tell its lateness from a client's.
		st := s.Stats(false)
		t.Logf("lab server (%s): %d frames, late p50 %.2f ms, p99 %.2f ms, max %.2f ms", st.Policy, st.Frames, st.LateP50ms, st.LateP99ms, st.LateMaxms)
		s.Close()
		hs.Close()
	})
	return hs.URL
}

// The lab's workload, shortened so the test takes seconds: 4 short streams
// for 3 s, run.py's default 32000-word long prompt at 1.5 s.
var quickLab = sim.LabWorkload{ShortConcurrency: 4, ShortInputLen: 128, ShortOutputLen: 64,
	LongInputLen: 32000, LongOutputLen: 16, LongCount: 1, Duration: 3, InjectAfter: 1.5}

func labArgs(url, label, jsonPath string) []string {
	w := quickLab
	return []string{"--base-url", url, "--label", label, "--json", jsonPath,
		"--short-concurrency", fmt.Sprint(w.ShortConcurrency), "--short-input-len", fmt.Sprint(w.ShortInputLen),
		"--short-output-len", fmt.Sprint(w.ShortOutputLen), "--long-input-len", fmt.Sprint(w.LongInputLen),
		"--long-output-len", fmt.Sprint(w.LongOutputLen), "--long-count", fmt.Sprint(w.LongCount),
		"--duration", fmt.Sprint(w.Duration), "--inject-after", fmt.Sprint(w.InjectAfter), "--warmup", "1"}
}

// The acceptance test: the unmodified lab script, run against
// `servelab labserver`, shows the stall. Prefill-first's worst gap is within
// 20% of the simulator's prediction for the same workload and chunked
// prefill (budget 2048) cuts it at least 5x. Files from `servelab measure`
// load in the script's --compare, and the script's in `servelab compare`.
func TestRunPyAgainstLabServer(t *testing.T) {
	py := python3(t)
	script := filepath.Join("testdata", "run.py")
	dir := t.TempDir()
	type lab struct {
		label, policy string
		budget        int
	}
	labs := []lab{{"unchunked", "prefill-first", 0}, {"chunked", "chunked", 2048}}
	worst := map[string]float64{}
	for _, l := range labs {
		cfg := labEngine(t, l.policy, l.budget)
		url := startLab(t, labserver.Config{Engine: cfg})
		path := filepath.Join(dir, l.label+".json")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, py, append([]string{script}, labArgs(url, l.label, path)...)...).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("run.py against the %s lab server: %v\n%s", l.label, err, out)
		}
		m, err := readMeasuredFile(path)
		if err != nil {
			t.Fatalf("run.py's file does not read: %v", err)
		}
		s := m.Summary
		if s.LongFailed != 0 || s.ShortFailed != 0 || s.ShortCompleted < quickLab.ShortConcurrency {
			t.Fatalf("%s: %+v\n%s", l.label, s, out)
		}
		pred, err := sim.RunLab(cfg, quickLab)
		if err != nil {
			t.Fatal(err)
		}
		worst[l.label] = s.WorstGap
		t.Logf("%s: run.py measured worst gap %.1f ms (+%.2f s), simulator predicts %.1f ms; long TTFT %.1f vs %.1f ms",
			l.label, s.WorstGap*1e3, s.WorstGapOffset, labfile.Of(pred).WorstGap*1e3, s.LongTTFT*1e3, labfile.Of(pred).LongTTFT*1e3)
		if l.policy == "prefill-first" {
			if rel := math.Abs(s.WorstGap-labfile.Of(pred).WorstGap) / labfile.Of(pred).WorstGap; rel > 0.20 {
				t.Errorf("prefill-first worst gap %.1f ms is %.0f%% off the simulator's %.1f ms", s.WorstGap*1e3, rel*100, labfile.Of(pred).WorstGap*1e3)
			}
		}
	}
	if r := worst["unchunked"] / worst["chunked"]; r < 5 {
		t.Errorf("chunked worst gap only %.1fx smaller (%.1f vs %.1f ms), want >= 5x", r, worst["chunked"]*1e3, worst["unchunked"]*1e3)
	}
	out, err := exec.Command(py, script, "--compare", filepath.Join(dir, "chunked.json"), filepath.Join(dir, "unchunked.json")).CombinedOutput()
	if err != nil || !regexp.MustCompile(`worst-gap ratio \d+\.\dx \(unchunked over chunked\)`).Match(out) {
		t.Errorf("run.py --compare: %v\n%s", err, out)
	}
	t.Logf("run.py --compare:\n%s", out)

	// servelab measure against the chunked server; its file in the script's
	// --compare, the script's file in servelab compare.
	url := startLab(t, labserver.Config{Engine: labEngine(t, "chunked", 2048)})
	mine := filepath.Join(dir, "measured.json")
	args := append([]string{"measure", "--quiet"}, labArgs(url, "servelab-chunked", mine)...)
	args[len(args)-5] = "2" // --duration 2
	args[len(args)-3] = "1" // --inject-after 1
	code, stdout, stderr := cli(t, args...)
	if code != 0 {
		t.Fatalf("servelab measure: exit %d\n%s\n%s", code, stdout, stderr)
	}
	out, err = exec.Command(py, script, "--compare", mine, filepath.Join(dir, "unchunked.json")).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("(unchunked over servelab-chunked)")) {
		t.Errorf("run.py --compare with servelab measure's file: %v\n%s", err, out)
	}
	code, stdout, stderr = cli(t, "compare", filepath.Join(dir, "unchunked.json"), mine)
	if code != 0 || !strings.Contains(stdout, "Side by side — measured, latencies in ms") || !strings.Contains(stdout, "(servelab-chunked over unchunked)") {
		t.Errorf("servelab compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestCompareErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"summary": {"label": 1}}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", bad}, "two or more"},
		{[]string{"compare", bad, bad}, "summary.label: want a string"},
		{[]string{"compare", bad, filepath.Join(dir, "missing.json")}, "summary.label"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
}

func TestMeasureFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"measure", "--duration", "10", "--inject-after", "10"}, "--inject-after must be less than --duration"},
		{[]string{"measure", "--api", "responses"}, "--api must be completions or chat"},
		{[]string{"measure", "--short-concurrency", "0"}, "--short-concurrency"},
		{[]string{"measure", "--base-url", "http://127.0.0.1:1"}, "Is the server up? Otherwise pass --model explicitly"},
		// Checked before the run, not found only when saving what it measured.
		{[]string{"measure", "--base-url", "http://127.0.0.1:1", "--json", filepath.Join(t.TempDir(), "missing", "run.json")}, "does not exist (create it first"},
		{[]string{"measure", "--base-url", "http://127.0.0.1:1", "--json", t.TempDir()}, "is a directory"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
}

// A server that answers every request with an error: the run saves what it
// saw and exits non-zero, saying that nothing was measured.
func TestMeasureEveryRequestFailed(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		time.Sleep(150 * time.Millisecond) // slow enough that the run is not stopped as "every request failing"
		http.Error(w, `{"error":{"message":"out of memory"}}`, http.StatusInternalServerError)
	}))
	defer hs.Close()
	path := filepath.Join(t.TempDir(), "failed.json")
	code, stdout, stderr := cli(t, "measure", "--quiet", "--base-url", hs.URL, "--warmup", "0", "--short-concurrency", "1",
		"--duration", "0.5", "--inject-after", "0.1", "--json", path)
	if code == 0 || !strings.Contains(stderr, "every request failed") || !strings.Contains(stderr, "out of memory") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if _, err := readMeasuredFile(path); err != nil {
		t.Errorf("the failed run's JSON was not saved: %v", err)
	}
}

// A lab server killed mid-run: partial results saved, a clear message, a
// non-zero exit.
func TestMeasureServerKilledMidRun(t *testing.T) {
	s, err := labserver.New(labserver.Config{Engine: labEngine(t, "chunked", 2048)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer s.Close()
	go func() {
		time.Sleep(1200 * time.Millisecond)
		hs.CloseClientConnections()
		hs.Close()
	}()
	path := filepath.Join(t.TempDir(), "partial.json")
	start := time.Now()
	code, stdout, stderr := cli(t, "measure", "--quiet", "--base-url", hs.URL, "--warmup", "0", "--short-concurrency", "4",
		"--short-output-len", "32", "--long-input-len", "1000", "--duration", "30", "--inject-after", "0.5", "--json", path)
	if code == 0 || time.Since(start) > 15*time.Second {
		t.Fatalf("exit %d after %v\n%s\n%s", code, time.Since(start), stdout, stderr)
	}
	if !strings.Contains(stderr, "the lab server stopped answering") || !strings.Contains(stderr, "partial results saved to "+path) {
		t.Errorf("stderr %q", stderr)
	}
	m, err := readMeasuredFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Extra == nil || !m.Extra.Interrupted || m.Summary.TokensObserved == 0 || m.Summary.ShortCompleted == 0 {
		t.Errorf("partial file: %+v %+v", m.Summary, m.Extra)
	}
}

// syncBuffer is a bytes.Buffer safe to read while serve writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// servelab serve end to end: the site and the API on loopback with two
// embedded lab servers; a foreign Host is refused; a measurement by lab name
// runs and is saved.
func TestServeEndToEnd(t *testing.T) {
	var out syncBuffer
	var errb bytes.Buffer
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveUntil(ctx, []string{"--port", "0", "--runs", dir, "--ideal"}, &out, &errb) }()
	var base string
	for i := 0; i < 200 && base == ""; i++ {
		if m := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(out.String()); m != "" && strings.Contains(out.String(), "runs saved") {
			base = m
		}
		time.Sleep(10 * time.Millisecond)
	}
	if base == "" {
		cancel()
		t.Fatalf("serve did not start: %s %s", out.String(), errb.String())
	}
	get := func(path string, hdr map[string]string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/api/health", nil); code != 200 || !strings.Contains(body, `"name":"prefill-first"`) || !strings.Contains(body, `"name":"chunked"`) {
		t.Errorf("health: %d %s", code, body)
	}
	if code, body := get("/", nil); code != 200 || !strings.Contains(strings.ToLower(body), "<html") {
		t.Errorf("site: %d %.200s", code, body)
	}
	if code, _ := get("/api/health", map[string]string{"Host": "rebound.example:80"}); code != 403 {
		t.Errorf("foreign Host: %d", code)
	}
	// The page is embeddable from any origin (slides); the API is not.
	if code, _ := get("/", map[string]string{"Origin": "https://elsewhere.example"}); code != 200 {
		t.Errorf("the page for a foreign Origin: %d", code)
	}
	if code, _ := get("/api/health", map[string]string{"Origin": "https://elsewhere.example"}); code != 403 {
		t.Errorf("the API for a foreign Origin: %d", code)
	}
	resp, err := http.Post(base+"/api/measure", "application/json", strings.NewReader(
		`{"lab":"chunked","label":"e2e","duration":1,"inject_after":0.5,"short_concurrency":2,"short_output_len":16,"long_input_len":1000,"warmup":0}`))
	if err != nil {
		t.Fatal(err)
	}
	var started struct{ ID, Result string }
	json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if resp.StatusCode != 202 || started.ID == "" {
		t.Fatalf("measure: %d", resp.StatusCode)
	}
	var code int
	for i := 0; i < 100; i++ {
		if code, _ = get(started.Result, nil); code != 202 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != 200 {
		t.Errorf("result: %d", code)
	}
	if _, err := readMeasuredFile(filepath.Join(dir, started.ID+".json")); err != nil {
		t.Errorf("saved run: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestCompareReadsVLLMBenchResults(t *testing.T) {
	dir := t.TempDir()
	v := filepath.Join(dir, "vllm-run.json")
	os.WriteFile(v, []byte(`{"backend":"vllm","duration":2,"completed":2,"itls":[[0.010,0.012],[0.011,0.900]],"errors":["",""]}`), 0o644)
	m := &labfile.Measured{Config: labfile.DefaultConfig(), Summary: labfile.Summarise(labfile.Run{Label: "mine", Arrivals: []labfile.Arrival{{T: 1, Gap: 0.01}, {T: 2, Gap: 0.09}}, Inject: 1.5, Wall: 2})}
	mine := filepath.Join(dir, "mine.json")
	if err := labclient.SaveMeasured(mine, m); err != nil {
		t.Fatal(err)
	}
	code, out, errs := cli(t, "compare", mine, v)
	if code != 0 || !strings.Contains(out, "vllm-run") || !strings.Contains(out, "900.0") || !strings.Contains(out, "worst-gap ratio 10.0x (vllm-run over mine)") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
	os.WriteFile(v, []byte(`{"duration":2}`), 0o644)
	if code, _, errs := cli(t, "compare", mine, v); code == 0 || !strings.Contains(errs, "--save-detailed") {
		t.Errorf("a vLLM file without itls: exit %d, %s", code, errs)
	}
}

// servelab labserver on loopback: run.py's and measure's requests are
// served; a foreign Host or a browser page's Origin is refused.
func TestLabServerCommandGuardsLoopback(t *testing.T) {
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- labServerUntil(ctx, []string{"--port", "0", "--policy", "chunked", "--served-model-name", "m"}, &out, io.Discard)
	}()
	var base string
	for i := 0; i < 200 && base == ""; i++ {
		base = regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(out.String())
		time.Sleep(10 * time.Millisecond)
	}
	if base == "" {
		cancel()
		t.Fatal("labserver did not start")
	}
	for _, c := range []struct {
		host, origin string
		status       int
	}{
		{"", "", 200},
		{"localhost" + base[len("http://127.0.0.1"):], "", 200},
		{"lab.attacker.example", "", 403},
		{"", "https://attacker.example", 403},
	} {
		req, _ := http.NewRequest("GET", base+"/v1/models", nil)
		if c.host != "" {
			req.Host = c.host
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("Host %q Origin %q: %d, want %d", c.host, c.origin, resp.StatusCode, c.status)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
