package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servelab/sim"
)

// checkNotes fails when a run's keyed notes are not its notes, one for one
// and word for word (the page shows the keyed ones, the CLI the others).
func checkNotes(t *testing.T, what string, lines []string, notes []sim.Note) {
	t.Helper()
	if len(lines) != len(notes) {
		t.Errorf("%s: %d lines but %d keyed notes", what, len(lines), len(notes))
		return
	}
	for i, n := range notes {
		if n.Key == "" || n.Text != lines[i] {
			t.Errorf("%s %d: keyed note %+v, line %q", what, i, n, lines[i])
		}
		// The English is the template's own filling: a nested note prints its Text.
		if got := fmt.Sprint(n); got != lines[i] {
			t.Errorf("%s %d: the note prints %q", what, i, got)
		}
	}
}

func TestBenchNotesHaveKeys(t *testing.T) {
	files := []string{"vllm.json", "sglang.jsonl", "guidellm.json", "guidellm_v02.json",
		"aiperf/profile_export.jsonl", "aiperf/profile_export_raw.jsonl", "aiperf/profile_export_aiperf.json",
		"genai-perf/profile_export.json", "genai-perf/profile_export_genai_perf.json",
		"llmperf/m_550_150_individual_responses.json", "llmperf/m_550_150_summary.json"}
	keys := map[string]bool{}
	for _, f := range files {
		for i, b := range readFixture(t, f) {
			what := fmt.Sprintf("%s run %d", f, i)
			checkNotes(t, what+" notes", b.Notes, b.NoteNotes)
			checkNotes(t, what+" cannot", b.Cannot, b.CannotNotes)
			for _, n := range append(b.NoteNotes, b.CannotNotes...) {
				keys[n.Key] = true
			}
		}
	}
	// A summary merged into its per-request file drops the "beside this
	// file" lines from both lists and notes the merge in both.
	for _, pair := range [][2]string{{"aiperf/profile_export.jsonl", "aiperf/profile_export_aiperf.json"},
		{"genai-perf/profile_export.json", "genai-perf/profile_export_genai_perf.json"},
		{"llmperf/m_550_150_individual_responses.json", "llmperf/m_550_150_summary.json"}} {
		b, s := readAlone(t, pair[0])[0], readAlone(t, pair[1])[0]
		before := len(b.Cannot)
		b.Merge(s)
		checkNotes(t, pair[0]+" merged notes", b.Notes, b.NoteNotes)
		checkNotes(t, pair[0]+" merged cannot", b.Cannot, b.CannotNotes)
		if strings.Contains(strings.Join(b.Cannot, "\n"), "beside this file") || (pair[0] != "genai-perf/profile_export.json" && len(b.Cannot) >= before) {
			t.Errorf("%s: merging %s left %q", pair[0], pair[1], b.Cannot)
		}
		if n := b.NoteNotes[len(b.NoteNotes)-1]; n.Key != "bench.merged" {
			t.Errorf("%s: the merge's note is %+v", pair[0], n)
		}
	}
	// The samples exercise most of the readers' notes (the page's catalogue
	// test reads the same files): a reader that lost its keys shows here.
	if len(keys) < 15 {
		t.Errorf("only %d note keys in the samples: %v", len(keys), keys)
	}
}

// readAlone is a sample's runs as its reader gives them, with no companion merged.
func readAlone(t *testing.T, name string) []*Run {
	t.Helper()
	path := filepath.Join("..", "testdata", "bench", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Read(path, data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return runs
}

// A file the readers refuse is refused with a keyed note whose English is
// the error's message, the same from the whole reader and the sliced one.
func TestBenchRefusalsHaveKeys(t *testing.T) {
	for _, data := range []string{`{"foo": 1}`, `[]`, `{"median_ttft_ms": 0, "completed": 0, "failed": 3}`, `{"itls": [[0.1], [0.1]], "ttfts": [0.1]}`, `{"a": 1}` + "\n" + `{"b": 2}`, `{"benchmarks": []}`} {
		for _, read := range []func() error{
			func() error { _, err := Read("x.json", []byte(data)); return err },
			func() error { _, err := ReadSliced("x.json", []byte(data), nil); return err },
		} {
			err := read()
			var ne *sim.NoteError
			if err == nil || !errors.As(err, &ne) || ne.Note.Key == "" || !strings.Contains(err.Error(), ne.Note.Text) {
				t.Errorf("%s: error %v carries no keyed note (%+v)", data, err, ne)
			}
		}
	}
}
