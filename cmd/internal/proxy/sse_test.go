package proxy

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// countingWriter records what each flush had seen, to check frame boundaries.
type countingWriter struct {
	*httptest.ResponseRecorder
	flushed []string
}

func (c *countingWriter) Flush() { c.flushed = append(c.flushed, c.Body.String()) }

func TestRelaySSEFlushesWholeFrames(t *testing.T) {
	in := "data: a\n\n: comment\n\ndata: b\r\ndata: c\r\n\r\ndata: last"
	w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
	if err := RelaySSE(w, strings.NewReader(in), 1<<10); err != nil {
		t.Fatal(err)
	}
	body := w.Body.String()
	if !strings.HasSuffix(body, in+"\n\n") {
		t.Fatalf("relayed %q", body)
	}
	// The opening comment, then one flush per frame, each ending at a frame boundary.
	if len(w.flushed) != 5 {
		t.Fatalf("%d flushes: %q", len(w.flushed), w.flushed)
	}
	for _, f := range w.flushed {
		if !strings.HasSuffix(f, "\n\n") && !strings.HasSuffix(f, "\r\n\r\n") {
			t.Errorf("flushed mid-frame: %q", f)
		}
	}
}

func TestRelaySSERefusesHugeFrames(t *testing.T) {
	w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
	in := "data: " + strings.Repeat("x", 100<<10) + "\n\n"
	if err := RelaySSE(w, strings.NewReader(in), 64<<10); err == nil {
		t.Fatal("a 100 KiB frame passed a 64 KiB limit")
	}
}
