package lab

import (
	"bytes"
	"strings"
	"testing"

	"servelab/sim/internal/jsonread"
)

// Writing and reading agree on the size: servelab writes no measured file
// that its readers refuse.
func TestWriteLimitIsReadLimit(t *testing.T) {
	if maxWriteBytes != jsonread.MaxBytes {
		t.Fatalf("Write keeps files under %d bytes, Read accepts %d", maxWriteBytes, jsonread.MaxBytes)
	}
}

// bigRun is a run with n gaps and, per gap, a raw frame and a request result.
func bigRun(n int) *Measured {
	m := &Measured{Config: DefaultConfig(), Summary: Summary{Label: "big", ShortConcurrency: 16}, Extra: &Extra{Warnings: []string{"kept"}}}
	for i := range n {
		t := float64(i)/1000 - 1
		m.Gaps = append(m.Gaps, Gap{TRelInject: t, Gap: 0.001})
		m.Extra.Frames = append(m.Extra.Frames, Frame{Stream: i % 16, TRelInject: t, Gap: 0.001, Tokens: 1})
		m.Extra.Requests = append(m.Extra.Requests, StreamResult{TTFT: 0.01, Latency: 0.5})
	}
	return m
}

// Past the limit the extras go, frames first, each with a warning in the
// file, and what is written reads back; the caller's run is untouched.
func TestWriteStaysUnderReadLimit(t *testing.T) {
	defer func(n int) { maxWriteBytes = n }(maxWriteBytes)
	m := bigRun(2000)
	var full bytes.Buffer
	if err := Write(&full, m); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		limit          int
		frames, reqs   bool
		warnings, fail int
	}{
		{full.Len(), true, true, 1, 0},
		{full.Len() - 1, false, true, 2, 0},
		{full.Len() / 3, false, false, 3, 0},
		{1000, false, false, 0, 1},
	} {
		maxWriteBytes = c.limit
		var b bytes.Buffer
		err := Write(&b, m)
		if c.fail > 0 {
			if err == nil || !strings.Contains(err.Error(), "too large") || b.Len() != 0 {
				t.Errorf("limit %d: err %v, %d bytes written", c.limit, err, b.Len())
			}
			continue
		}
		if err != nil {
			t.Fatalf("limit %d: %v", c.limit, err)
		}
		if b.Len() > c.limit {
			t.Errorf("limit %d: wrote %d bytes", c.limit, b.Len())
		}
		got, err := Read(&b)
		if err != nil {
			t.Fatalf("limit %d: %v", c.limit, err)
		}
		x := got.Extra
		if len(got.Gaps) != 2000 || (len(x.Frames) > 0) != c.frames || (len(x.Requests) > 0) != c.reqs || len(x.Warnings) != c.warnings {
			t.Errorf("limit %d: %d gaps, %d frames, %d requests, warnings %q", c.limit, len(got.Gaps), len(x.Frames), len(x.Requests), x.Warnings)
		}
	}
	if len(m.Extra.Frames) != 2000 || len(m.Extra.Requests) != 2000 || len(m.Extra.Warnings) != 1 {
		t.Error("Write changed the caller's run")
	}
	// The gaps alone past the limit are refused before anything is marshalled.
	maxWriteBytes = 100 * minGapBytes
	if err := Write(&bytes.Buffer{}, &Measured{Summary: Summary{Label: "x"}, Gaps: make([]Gap, 101)}); err == nil {
		t.Error("101 gaps under a limit of 100 gaps' bytes were written")
	}
}
