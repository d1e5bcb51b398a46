package labclient

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"servelab/cmd/internal/atomicfile"
	"servelab/sim/lab"
)

// grid prints a right-aligned table under a title, as the script's grid does.
func grid(w io.Writer, headers []string, rows [][]string, title string) {
	if len(rows) == 0 {
		return
	}
	width := make([]int, len(headers))
	for i, h := range headers {
		width[i] = utf8.RuneCountInString(h)
		for _, r := range rows {
			width[i] = max(width[i], utf8.RuneCountInString(r[i]))
		}
	}
	line := func(cells []string) {
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)) + c
		}
		fmt.Fprintln(w, strings.Join(parts, "  "))
	}
	fmt.Fprintf(w, "\n%s\n", title)
	line(headers)
	dashes := make([]string, len(headers))
	for i := range dashes {
		dashes[i] = strings.Repeat("-", width[i])
	}
	line(dashes)
	for _, r := range rows {
		line(r)
	}
}

// msf formats seconds as milliseconds with one decimal, as the script's ms().
func msf(x float64) string { return fmt.Sprintf("%.1f", 1000*x) }

// pyRepr quotes a string as Python's repr does for plain text.
func pyRepr(s string) string {
	q := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = `"`
	}
	var b strings.Builder
	b.WriteString(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case string(r) == q:
			b.WriteString(`\` + q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(q)
	return b.String()
}

// Report prints one run's summary exactly as the script's report_one does;
// source names where the figures came from ("measured", or "simulated" for
// `servelab sim --workload lab`).
func Report(w io.Writer, s lab.Summary, source string) {
	if s.Error != "" {
		fmt.Fprintf(w, "\n%s\n", s.Error)
		return
	}
	grid(w, []string{"window", "p50", "p90", "p99", "max"}, [][]string{
		{"whole run", msf(s.ITLP50), msf(s.ITLP90), msf(s.ITLP99), msf(s.ITLMax)},
		{"before injection", msf(s.ITLQuietP50), "", msf(s.ITLQuietP99), ""},
		{"during long prefill", msf(s.ITLDuringP50), "", msf(s.ITLDuringP99), msf(s.ITLDuringMax)},
		{"after", "", "", msf(s.ITLAfterP99), ""},
	}, fmt.Sprintf("Inter-token latency, ms — %s, label=%s", source, pyRepr(s.Label)))
	fmt.Fprintf(w, "\nworst gap %s ms, %+.2f s from injection\n", msf(s.WorstGap), s.WorstGapOffset)
	fmt.Fprintf(w, "spike ratio %.1fx the quiet-window median ITL\n", s.SpikeRatio)
	fmt.Fprintf(w, "long-prompt TTFT %s ms (%d prompt tokens)\n", msf(s.LongTTFT), s.LongInputLen)
	if s.LongFailed > 0 {
		fmt.Fprintf(w, "  WARNING: %d long request(s) FAILED -- %s\n", s.LongFailed, s.LongError)
		fmt.Fprintln(w, "  Without a long prefill there is nothing to measure. The usual cause is a")
		fmt.Fprintln(w, "  prompt longer than the server's max-model-len; check the error above.")
	}
	fmt.Fprintf(w, "short requests %d ok, %d failed, %.1f tok/s aggregate over %.1fs\n",
		s.ShortCompleted, s.ShortFailed, s.OutputTokS, s.Wall)
	fmt.Fprint(w, `
The number that matters is 'worst gap'. Chunked prefill does not remove
the spike; it bounds it at roughly one chunk of compute plus the decode
half of the same iteration. If your worst gap is close to the long
prompt's whole prefill time, chunking is not actually on — check the
server's startup log for 'Chunked prefill is enabled with
max_num_batched_tokens=N' (vLLM) or 'chunked_prefill_size=N' (SGLang).
`)
}

// Compare prints saved runs side by side, as the script's --compare does.
func Compare(w io.Writer, runs []lab.Summary) {
	rows := make([][]string, len(runs))
	for i, r := range runs {
		if r.Error != "" {
			rows[i] = []string{r.Label, "-", "-", "-", "-", "-", "-"}
			continue
		}
		rows[i] = []string{r.Label, msf(r.ITLP50), msf(r.ITLP99), msf(r.WorstGap),
			fmt.Sprintf("%.1f", r.SpikeRatio), msf(r.LongTTFT), fmt.Sprintf("%.1f", r.OutputTokS)}
	}
	grid(w, []string{"label", "ITL p50", "ITL p99", "worst gap", "spike x", "long TTFT", "tok/s"}, rows,
		"Side by side — measured, latencies in ms")
	if len(runs) == 2 {
		a, b := runs[0], runs[1]
		if a.WorstGap != 0 && b.WorstGap != 0 {
			fmt.Fprintf(w, "\nworst-gap ratio %.1fx (%s over %s)\n", b.WorstGap/a.WorstGap, b.Label, a.Label)
		}
		if a.LongTTFT != 0 && b.LongTTFT != 0 {
			fmt.Fprintf(w, "long TTFT ratio %.2fx\n", b.LongTTFT/a.LongTTFT)
		}
	}
	fmt.Fprint(w, `
Expect the worst gap to move by orders of magnitude and the long
prompt's TTFT to barely move: chunking does not change the FLOP count
of a prefill, only how many iterations it is spread over. If TTFT got
much WORSE with chunking, your chunk is below the roofline ridge point
and each chunk is re-streaming the weights for too few tokens — raise it.
`)
}

// SaveMeasured writes a measured-JSON file through atomicfile: a unique
// temporary file renamed into place, so an interrupted or concurrent write
// never leaves half a file, a symlink's target is replaced and not the
// link, and a FIFO or device is written through. It returns lab.Write's
// error or the file system's.
func SaveMeasured(path string, m *lab.Measured) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return lab.Write(w, m) })
}

// CheckWritable makes sure a measured JSON can be saved at path before a run
// starts, so that a missing directory is not found only once the data is in.
func CheckWritable(path string) error {
	target, st, err := atomicfile.Resolve(path)
	if err != nil {
		return fmt.Errorf("--json %s: %v", path, err)
	}
	if st != nil && st.IsDir() {
		return fmt.Errorf("--json %s is a directory: name a file", path)
	}
	if st != nil && !st.Mode().IsRegular() {
		return nil // a FIFO or a device is written through, in place
	}
	dir := filepath.Dir(target)
	st, err = os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--json %s: directory %s does not exist (create it first, or the run's data would be lost)", path, dir)
	}
	if !st.IsDir() {
		return fmt.Errorf("--json %s: %s is not a directory", path, dir)
	}
	f, err := os.CreateTemp(dir, ".servelab-write-check-*")
	if err != nil {
		return fmt.Errorf("--json %s: cannot write in %s: %v", path, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
