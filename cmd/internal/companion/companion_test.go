package companion

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"servelab/cmd/internal/labclient"
	"servelab/cmd/internal/labserver"
	"servelab/sim"
	labfile "servelab/sim/lab"
)

const secretKey = "sk-lab-7f3a9c1e5b"

// startLab runs a simulated lab server requiring secretKey.
func startLab(t *testing.T) string {
	t.Helper()
	step, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := sim.NewPolicy("chunked", 2048)
	s, err := labserver.New(labserver.Config{Engine: sim.Config{Step: step, Policy: p}, APIKey: secretKey})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { s.Close(); hs.Close() })
	return hs.URL
}

// startCompanion runs a companion on loopback with one lab (and a second
// name for the same server) and returns its URL.
func startCompanion(t *testing.T, labURL string, extraOrigins ...string) (*Server, string, string) {
	t.Helper()
	dir := t.TempDir()
	hs := httptest.NewUnstartedServer(nil)
	host := hs.Listener.Addr().String()
	s, err := New(Config{
		Labs: []Lab{{Name: "lab", BaseURL: labURL, APIKey: secretKey, Kind: "embedded"},
			{Name: "lab2", BaseURL: labURL + "/", APIKey: secretKey, Kind: "external"}},
		RunsDir: dir, AllowedHosts: []string{host}, AllowedOrigins: append([]string{"http://" + host}, extraOrigins...),
		Site: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the site") }),
	})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = s.Handler()
	hs.Start()
	t.Cleanup(func() { s.Close(); hs.Close() })
	return s, hs.URL, dir
}

type answer struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, u string, hdr map[string]string, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func TestForeignHostAndOriginGet403(t *testing.T) {
	_, u, _ := startCompanion(t, "http://127.0.0.1:1", "https://course.example.edu")
	self := "http://" + strings.TrimPrefix(u, "http://")
	for _, c := range []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		status int
		code   string
	}{
		{"own page", "GET", "/api/health", map[string]string{"Origin": self}, 200, ""},
		{"no origin (curl)", "GET", "/api/health", nil, 200, ""},
		{"site", "GET", "/", nil, 200, ""},
		{"DNS rebinding: foreign Host", "GET", "/api/health", map[string]string{"Host": "attacker.example:80"}, 403, "host_not_allowed"},
		{"foreign Host on the site too", "GET", "/", map[string]string{"Host": "rebind.attacker.example"}, 403, "host_not_allowed"},
		{"foreign Origin", "GET", "/api/runs", map[string]string{"Origin": "https://evil.example"}, 403, "origin_not_allowed"},
		{"foreign Origin POST", "POST", "/api/measure", map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain"}, 403, "origin_not_allowed"},
		{"null Origin", "GET", "/api/health", map[string]string{"Origin": "null"}, 403, "origin_not_allowed"},
		{"origin with a path", "GET", "/api/health", map[string]string{"Origin": self + "/x"}, 403, "origin_not_allowed"},
		{"cross-site fetch without Origin", "GET", "/api/runs", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "origin_not_allowed"},
		{"allowed extra origin", "GET", "/api/health", map[string]string{"Origin": "https://course.example.edu"}, 200, ""},
		{"preflight", "OPTIONS", "/api/measure", map[string]string{"Origin": "https://course.example.edu"}, 204, ""},
	} {
		a := do(t, c.method, u+c.path, c.hdr, "")
		if a.status != c.status || (c.code != "" && !strings.Contains(a.body, `"code":"`+c.code+`"`)) {
			t.Errorf("%s: %d %s", c.name, a.status, a.body)
		}
		if acao := a.header.Get("Access-Control-Allow-Origin"); acao == "*" || (acao != "" && acao != c.hdr["Origin"]) {
			t.Errorf("%s: Access-Control-Allow-Origin %q", c.name, acao)
		}
	}
	if _, err := New(Config{Labs: []Lab{{Name: "x", BaseURL: "http://127.0.0.1:1"}}, AllowedHosts: []string{"h"}, AllowedOrigins: []string{"*"}}); err == nil {
		t.Error(`"*" accepted as an origin`)
	}
}

func TestMeasureOnlyConfiguredLabs(t *testing.T) {
	_, u, _ := startCompanion(t, "http://127.0.0.1:1")
	json := map[string]string{"Content-Type": "application/json"}
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"lab":"elsewhere"}`, 403, "target_not_allowed"},
		{`{"base_url":"http://169.254.169.254/latest"}`, 403, "target_not_allowed"},
		{`{"base_url":"http://127.0.0.1:2"}`, 403, "target_not_allowed"},
		{`{"host":"example.com","port":80}`, 403, "target_not_allowed"},
		{`{"port":6379}`, 403, "target_not_allowed"},
		{`{"lab":"lab","base_url":"http://evil.example"}`, 403, "target_not_allowed"},
		{`{"upstream":"http://evil.example"}`, 400, "unknown field"},
		{`{"json":"/etc/passwd"}`, 400, "saves every run itself"},
		{`{"duration":100000}`, 400, "limit"},
		{`{"duration":10,"inject_after":10}`, 400, "inject_after must be less than duration"},
		{`{"short_concurrency":"many"}`, 400, "short_concurrency"},
		{`[1,2]`, 400, "JSON object"},
		// A minus sign stays one (it read "got 10 and _1"), and a body over
		// the limit is said to be too large, not not an object.
		{`{"duration":10,"inject_after":-1}`, 400, "inject_after \\u003e= 0, got 10 and -1"},
		{`{"label":"` + strings.Repeat("x", 70<<10) + `"}`, 413, "the body is over 65536 bytes"},
	} {
		a := do(t, "POST", u+"/api/measure", json, c.body)
		if a.status != c.status || !strings.Contains(a.body, c.want) {
			t.Errorf("%s: %d %s", c.body, a.status, a.body)
		}
	}
	if a := do(t, "POST", u+"/api/measure", map[string]string{"Content-Type": "text/plain"}, `{}`); a.status != 415 {
		t.Errorf("text/plain body: %d", a.status)
	}
	for _, id := range []string{"..%2f..%2fetc%2fpasswd", "20261130-000000-zzzzzz", "x"} {
		if a := do(t, "GET", u+"/api/runs/"+id, nil, ""); a.status != 404 {
			t.Errorf("run %q: %d", id, a.status)
		}
	}
}

// events reads an SSE stream into (event, data, id) triples until it ends.
func events(t *testing.T, u string, lastID ...string) [][3]string {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if len(lastID) > 0 {
		req.Header.Set("Last-Event-ID", lastID[0])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %v", resp.StatusCode, resp.Header)
	}
	var out [][3]string
	br := bufio.NewReader(resp.Body)
	ev, id := "", ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return out
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			ev = line[len("event: "):]
		case strings.HasPrefix(line, "id: "):
			id = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			out = append(out, [3]string{ev, line[len("data: "):], id})
		}
	}
}

// A whole measurement through the API: started by name, relayed live,
// saved, listed and fetched as the measured JSON; the lab's API key never
// reaches the page.
func TestMeasureRelayAndSave(t *testing.T) {
	lab := startLab(t)
	_, u, dir := startCompanion(t, lab)
	var seen strings.Builder // everything the page could see
	a := do(t, "POST", u+"/api/measure", map[string]string{"Content-Type": "application/json"},
		`{"lab":"lab2","label":"api-run","duration":1.2,"inject_after":0.6,"short_concurrency":3,"short_output_len":24,"long_input_len":2000,"warmup":0}`)
	seen.WriteString(a.body)
	if a.status != 202 {
		t.Fatalf("measure: %d %s", a.status, a.body)
	}
	var started struct{ ID, Events, Result string }
	if err := json.Unmarshal([]byte(a.body), &started); err != nil {
		t.Fatal(err)
	}
	if b := do(t, "POST", u+"/api/measure", map[string]string{"Content-Type": "application/json"}, `{}`); b.status != 409 {
		t.Errorf("second measurement while busy: %d %s", b.status, b.body)
	}
	if g := do(t, "GET", u+started.Result, nil, ""); g.status != 202 {
		t.Errorf("result while running: %d", g.status)
	}
	evs := events(t, u+started.Events)
	counts := map[string]int{}
	tokens := 0
	tokensIn := func(e [3]string) int {
		var batch []map[string]any
		if e[0] == "tokens" {
			if err := json.Unmarshal([]byte(e[1]), &batch); err != nil {
				t.Fatal(err)
			}
		}
		return len(batch)
	}
	for _, e := range evs {
		counts[e[0]]++
		seen.WriteString(e[1])
		tokens += tokensIn(e)
	}
	// A reconnect with Last-Event-ID gets the rest, nothing twice.
	cut := len(evs) / 2
	before := 0
	for _, e := range evs[:cut+1] {
		before += tokensIn(e)
	}
	after := 0
	rest := events(t, u+started.Events, evs[cut][2])
	for _, e := range rest {
		after += tokensIn(e)
	}
	if before+after != tokens || rest[len(rest)-1][0] != "end" {
		t.Errorf("resumed after message %d (id %s): %d + %d tokens, want %d", cut, evs[cut][2], before, after, tokens)
	}
	if counts["summary"] != 1 || counts["end"] != 1 || counts["phase"] < 3 || tokens < 50 || counts["request"] < 3 {
		t.Fatalf("events %v, %d tokens", counts, tokens)
	}
	if last := evs[len(evs)-1]; last[0] != "end" || !strings.Contains(last[1], `"state":"done"`) {
		t.Errorf("last event %v", last)
	}
	g := do(t, "GET", u+started.Result, nil, "")
	seen.WriteString(g.body)
	m, err := labfile.Read(strings.NewReader(g.body))
	if err != nil || g.status != 200 {
		t.Fatalf("result: %d %v", g.status, err)
	}
	if m.Summary.Label != "api-run" || m.Summary.ShortFailed != 0 || m.Summary.TokensObserved == 0 || len(m.Extra.Frames) != tokens {
		t.Errorf("result %+v, %d frames vs %d relayed", m.Summary, len(m.Extra.Frames), tokens)
	}
	if _, err := os.Stat(filepath.Join(dir, started.ID+".json")); err != nil {
		t.Errorf("not saved: %v", err)
	}
	for _, p := range []string{"/api/runs", "/api/health", "/api/labs"} {
		seen.WriteString(do(t, "GET", u+p, nil, "").body)
	}
	if !strings.Contains(seen.String(), started.ID) {
		t.Error("run not listed")
	}
	if strings.Contains(seen.String(), secretKey) {
		t.Error("the API key reached the page")
	}
}

// DELETE stops a run like Ctrl-C: the partial result is saved and served.
func TestStopSavesPartialRun(t *testing.T) {
	lab := startLab(t)
	s, u, _ := startCompanion(t, lab)
	a := do(t, "POST", u+"/api/measure", nil, `{"duration":60,"inject_after":30,"short_concurrency":2,"short_output_len":16,"warmup":0}`)
	var started struct{ ID, Result string }
	if err := json.Unmarshal([]byte(a.body), &started); err != nil || a.status != 202 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	time.Sleep(700 * time.Millisecond)
	d := do(t, "DELETE", u+"/api/runs/"+started.ID, nil, "")
	if d.status != 200 || !strings.Contains(d.body, `"state":"interrupted"`) {
		t.Fatalf("stop: %d %s", d.status, d.body)
	}
	g := do(t, "GET", u+started.Result, nil, "")
	m, err := labfile.Read(strings.NewReader(g.body))
	if err != nil || m.Extra == nil || !m.Extra.Interrupted || m.Summary.TokensObserved == 0 {
		t.Fatalf("partial result: %v %s", err, g.body[:min(300, len(g.body))])
	}
	if d := do(t, "DELETE", u+"/api/runs/"+started.ID, nil, ""); d.status != 409 {
		t.Errorf("stopping a stopped run: %d", d.status)
	}
	s.Close()
}

func TestGuardHelpers(t *testing.T) {
	for h, want := range map[string]bool{"127.0.0.1:80": true, "localhost": true, "[::1]:9": true, "::1": true,
		"127.1.2.3": true, "10.0.0.1:80": false, "example.com": false, "": false} {
		if IsLoopback(h) != want {
			t.Errorf("IsLoopback(%q) = %v", h, !want)
		}
	}
	r := &http.Request{Host: "LOCALHOST:8420", Header: http.Header{}, URL: &url.URL{}}
	if !CheckHost(r, LoopbackHosts(8420)) || CheckHost(r, LoopbackHosts(8421)) {
		t.Error("CheckHost")
	}
	r.Header.Set("Origin", "http://localhost:8420")
	if !CheckOrigin(r, LoopbackOrigins(8420)) || CheckOrigin(r, []string{"*"}) {
		t.Error("CheckOrigin")
	}
}

// Finished runs saved to disk leave memory after the newest few; they are
// still listed and fetched, from disk.
func TestOldSavedRunsLeaveMemory(t *testing.T) {
	s, base, dir := startCompanion(t, "http://127.0.0.1:1")
	m := &labfile.Measured{Config: labfile.DefaultConfig(), Summary: labfile.Summary{Label: "old", WorstGap: 0.5}}
	var ids []string
	for i := range 6 {
		ids = append(ids, fmt.Sprintf("20260101-00000%d-abcdef", i))
	}
	for _, id := range ids {
		if err := labclient.SaveMeasured(filepath.Join(dir, id+".json"), m); err != nil {
			t.Fatal(err)
		}
		ru := newRun(id, "old", "lab", 10)
		ru.finish("done", "", m)
		s.mu.Lock()
		s.runs[id] = ru
		s.mu.Unlock()
		s.forget(id, keepInMemory)
	}
	s.mu.Lock()
	n, first := len(s.runs), s.runs[ids[0]]
	s.mu.Unlock()
	if n != keepInMemory || first != nil {
		t.Fatalf("%d runs in memory (want %d), oldest still there: %v", n, keepInMemory, first != nil)
	}
	host := strings.TrimPrefix(base, "http://")
	a := do(t, "GET", base+"/api/runs/"+ids[0], map[string]string{"Host": host}, "")
	if a.status != 200 || !strings.Contains(a.body, `"worst_gap": 0.5`) && !strings.Contains(a.body, `"worst_gap":0.5`) {
		t.Fatalf("an evicted run must still be served from disk: %d %s", a.status, clip(a.body, 200))
	}
}

// The run list reads a saved file once, not on every call: a file changed
// behind its back keeping size and time is still listed as first read; a
// touched one is read again; a removed one leaves the list.
func TestRunListReadsEachSavedFileOnce(t *testing.T) {
	_, base, dir := startCompanion(t, "http://127.0.0.1:1")
	ids := []string{"20260101-000001-abcdef", "20260101-000002-abcdef"}
	for i, id := range ids {
		m := &labfile.Measured{Config: labfile.DefaultConfig(), Summary: labfile.Summary{Label: fmt.Sprintf("run%d", i), Error: "e"}}
		if err := labclient.SaveMeasured(filepath.Join(dir, id+".json"), m); err != nil {
			t.Fatal(err)
		}
	}
	list := func() map[string]runInfo {
		a := do(t, "GET", base+"/api/runs", nil, "")
		var l []runInfo
		if err := json.Unmarshal([]byte(a.body), &l); err != nil || a.status != 200 {
			t.Fatalf("list: %d %s", a.status, a.body)
		}
		out := map[string]runInfo{}
		for _, r := range l {
			out[r.ID] = r
		}
		return out
	}
	if l := list(); len(l) != 2 || l[ids[0]].Label != "run0" || l[ids[0]].State != "done" {
		t.Fatalf("first list: %+v", l)
	}
	path := filepath.Join(dir, ids[0]+".json")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", int(st.Size()))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if l := list(); l[ids[0]].Label != "run0" || l[ids[0]].State != "done" {
		t.Errorf("an unchanged (same size and time) file was read again: %+v", l[ids[0]])
	}
	later := st.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if l := list(); l[ids[0]].State != "failed" {
		t.Errorf("a changed file was not read again: %+v", l[ids[0]])
	}
	os.Remove(filepath.Join(dir, ids[1]+".json"))
	if l := list(); len(l) != 1 {
		t.Errorf("a removed file is still listed: %+v", l)
	}
}

// Subscribers replaying a long run share one encoded history: twenty of
// them allocate far less than twenty encodings of it.
func TestEventSubscribersShareTheHistory(t *testing.T) {
	s, base, _ := startCompanion(t, "http://127.0.0.1:1")
	id := "20260101-000003-abcdef"
	ru := newRun(id, "big", "lab", 1<<30)
	ru.add(labclient.Event{Type: "phase", Phase: "load"})
	for i := range 200_000 {
		ru.add(labclient.Event{Type: "token", T: float64(i) * 1e-3, Stream: i % 16, Gap: 0.0071, Tokens: 1})
	}
	ru.finish("done", "", &labfile.Measured{Summary: labfile.Summary{Label: "big", Error: "e"}})
	s.mu.Lock()
	s.runs[id] = ru
	s.mu.Unlock()
	logSize := len(ru.log)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const subs = 20
	errs := make(chan error, subs)
	for range subs {
		go func() {
			resp, err := http.Get(base + "/api/runs/" + id + "/events")
			if err != nil {
				errs <- err
				return
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && n < int64(logSize) {
				err = fmt.Errorf("a subscriber got %d bytes of a %d-byte history", n, logSize)
			}
			errs <- err
		}()
	}
	for range subs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d subscribers replaying a %.1f MB history allocated %.1f MB", subs, float64(logSize)/(1<<20), float64(alloc)/(1<<20))
	if alloc > uint64(3*logSize) {
		t.Errorf("%d subscribers allocated %d MB replaying a %.1f MB history; want well under one copy each", subs, alloc>>20, float64(logSize)/(1<<20))
	}
}

// A run in which every request failed measured nothing: it ends "failed",
// saying why, with what it saw still saved.
func TestRunWithEveryRequestFailedIsFailed(t *testing.T) {
	lab := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		time.Sleep(100 * time.Millisecond)
		http.Error(w, `{"error":{"message":"out of memory"}}`, http.StatusInternalServerError)
	}))
	defer lab.Close()
	_, u, dir := startCompanion(t, lab.URL)
	a := do(t, "POST", u+"/api/measure", nil, `{"duration":0.5,"inject_after":0.1,"short_concurrency":1,"warmup":0}`)
	var started struct{ ID, Events string }
	if err := json.Unmarshal([]byte(a.body), &started); err != nil || a.status != 202 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	evs := events(t, u+started.Events)
	if last := evs[len(evs)-1]; last[0] != "end" || !strings.Contains(last[1], `"state":"failed"`) {
		t.Errorf("last event %v, want the run failed", last)
	}
	if _, err := os.Stat(filepath.Join(dir, started.ID+".json")); err != nil {
		t.Errorf("the failed run was not saved: %v", err)
	}
	if l := do(t, "GET", u+"/api/runs", nil, ""); !strings.Contains(l.body, "every request failed") {
		t.Errorf("list: %s", l.body)
	}
}

// TestPageEmbeddableFromAnyOrigin: "Embed this view" puts the page in an
// iframe of a slide deck opened from disk (file://, Origin "null" where one
// is sent) or hosted on another site. The page and its assets load for any
// origin; the measurement API keeps refusing those same callers.
func TestPageEmbeddableFromAnyOrigin(t *testing.T) {
	_, u, _ := startCompanion(t, "http://127.0.0.1:1")
	iframe := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range iframe {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	for _, c := range []struct {
		name string
		path string
		hdr  map[string]string
	}{
		{"iframe from another site", "/?chapter=demo4", iframe},
		{"iframe from a file:// deck", "/?chapter=demo2&lang=zh", with(map[string]string{"Origin": "null"})},
		{"asset with a foreign Origin", "/app.js", with(map[string]string{"Origin": "https://slides.example.org", "Sec-Fetch-Dest": "script", "Sec-Fetch-Mode": "cors"})},
		{"static probe file", "/favicon.svg", with(map[string]string{"Sec-Fetch-Dest": "image", "Sec-Fetch-Mode": "no-cors"})},
	} {
		a := do(t, "GET", u+c.path, c.hdr, "")
		if a.status != 200 || a.body != "the site" {
			t.Errorf("%s: GET %s = %d %.120s, want the site", c.name, c.path, a.status, a.body)
		}
		if acao := a.header.Get("Access-Control-Allow-Origin"); acao != "" {
			t.Errorf("%s: the site sent Access-Control-Allow-Origin %q", c.name, acao)
		}
		if xfo := a.header.Get("X-Frame-Options"); xfo != "" {
			t.Errorf("%s: X-Frame-Options %q forbids embedding", c.name, xfo)
		}
	}
	// The API stays guarded against the same callers, and the Host check stays everywhere.
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
		code         string
	}{
		{"GET", "/api/health", iframe, "origin_not_allowed"},
		{"GET", "/api/runs", with(map[string]string{"Origin": "null"}), "origin_not_allowed"},
		{"POST", "/api/measure", with(map[string]string{"Origin": "https://slides.example.org", "Content-Type": "text/plain"}), "origin_not_allowed"},
		{"GET", "/api/nothing", with(map[string]string{"Origin": "https://slides.example.org"}), "origin_not_allowed"},
		{"GET", "/", with(map[string]string{"Host": "rebind.attacker.example"}), "host_not_allowed"},
	} {
		a := do(t, c.method, u+c.path, c.hdr, "")
		if a.status != 403 || !strings.Contains(a.body, `"code":"`+c.code+`"`) {
			t.Errorf("%s %s %v: %d %.120s, want 403 %s", c.method, c.path, c.hdr, a.status, a.body, c.code)
		}
	}
}

// A lab server that redirects is not followed (the lab's key would go along
// to a server nobody configured): the run fails with the reason.
func TestMeasureNeverFollowsALabsRedirect(t *testing.T) {
	var hits atomic.Int64
	var auth atomic.Value
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		auth.Store(r.Header.Get("Authorization"))
		io.WriteString(w, `{"data":[{"id":"elsewhere"}]}`)
	}))
	defer elsewhere.Close()
	lab := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer lab.Close()
	_, u, _ := startCompanion(t, lab.URL)
	a := do(t, "POST", u+"/api/measure", nil, `{"duration":2,"inject_after":1,"short_concurrency":1,"warmup":0,"model":"m"}`)
	var started struct{ ID, Events string }
	if err := json.Unmarshal([]byte(a.body), &started); err != nil || a.status != 202 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	evs := events(t, u+started.Events)
	if last := evs[len(evs)-1]; last[0] != "end" || !strings.Contains(last[1], `"state":"failed"`) {
		t.Errorf("last event %v, want the run failed", last)
	}
	l := do(t, "GET", u+"/api/runs", nil, "")
	if !strings.Contains(l.body, "redirect") || !strings.Contains(l.body, strings.TrimPrefix(elsewhere.URL, "http://")) {
		t.Errorf("the run's error does not name the redirect: %s", l.body)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests followed the lab's redirect (Authorization %q)", n, auth.Load())
	}
}
