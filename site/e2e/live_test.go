package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"servelab/site"
)

// fakeCompanion answers the part of `servelab serve`'s API the page uses
// (GET /api/health, POST /api/measure, the run's SSE events and its measured
// JSON), so the page's live mode is tested without a lab server.
func fakeCompanion(t *testing.T, result []byte) (string, *[]map[string]any) {
	t.Helper()
	var measures []map[string]any
	mux := http.NewServeMux()
	mux.Handle("/", site.Handler(os.DirFS(siteDir)))
	mux.HandleFunc("GET /api/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok": true, "mode": "companion", "labs": [{"name": "chunked", "kind": "embedded", "description": "test"}], "default_lab": "chunked", "running": ""}`)
	})
	mux.HandleFunc("POST /api/measure", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		measures = append(measures, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `{"id": "r1", "lab": "chunked", "events": "/api/runs/r1/events", "result": "/api/runs/r1"}`)
	})
	mux.HandleFunc("GET /api/runs/r1/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(event, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
			w.(http.Flusher).Flush()
		}
		send("phase", `{"type":"phase","phase":"load","t":0}`)
		send("phase", `{"type":"phase","phase":"inject","t":2}`)
		var frames []string
		for i := 1; i <= 40; i++ {
			gap := 0.007
			if i == 30 {
				gap = 0.9 // the stall while the long prompt prefills
			}
			frames = append(frames, fmt.Sprintf(`{"type":"token","t":%g,"stream":%d,"long":false,"gap":%g,"tokens":1}`, 1.5+float64(i)*0.02, i%8, gap))
		}
		send("tokens", "["+strings.Join(frames, ",")+"]")
		send("end", `{"id":"r1","state":"done"}`)
	})
	mux.HandleFunc("GET /api/runs/r1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(result)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/", &measures
}

func TestLiveModeWithCompanion(t *testing.T) {
	result, err := os.ReadFile(labJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	base, measures := fakeCompanion(t, result)
	ctx := tab(t)
	open(t, ctx, base+"?preset=lab-chunked&duration=6&inject=2&streams=8&long=8000")
	waitFor(t, ctx, `servelab.status().live && !document.getElementById("live").hidden`, "the live controls to appear")
	eval[any](t, ctx, `document.getElementById("live-start").click()`)
	waitFor(t, ctx, `servelab.status().liveFrames >= 39`, "the measured token frames to land on the timeline")
	waitFor(t, ctx, `!servelab.status().liveRunning && document.getElementById("measured-table").textContent.includes("live-r1.json")`, "the finished run's measured JSON")
	if len(*measures) != 1 {
		t.Fatalf("%d measurements started, want 1", len(*measures))
	}
	m := (*measures)[0]
	for k, want := range map[string]float64{"short_concurrency": 8, "long_input_len": 8000, "duration": 6, "inject_after": 2} {
		if m[k] != want {
			t.Errorf("measurement asked %s=%v, want %v (the page's lab knobs)", k, m[k], want)
		}
	}
}

func TestNoLiveModeOnStaticHost(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	waitFor(t, ctx, `servelab.status().liveProbed`, "the companion probe to answer")
	if hidden := eval[bool](t, ctx, `document.getElementById("live").hidden`); !hidden {
		t.Error("live controls shown on a static host with no /api/health")
	}
	if live := eval[bool](t, ctx, `servelab.status().live`); live {
		t.Error("live mode on with no companion")
	}
}
