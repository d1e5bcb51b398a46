package results

// Reading a benchmark tool's file: telling the format from its content, and
// the JSON helpers the per-tool readers (one file per tool) share.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"servelab/sim"
	"servelab/sim/internal/jsonread"
)

// MaxBytes bounds a file the readers accept (this package's and sim/lab's):
// a larger one is refused before it is parsed.
const MaxBytes = jsonread.MaxBytes

// MaxSeconds bounds any one time in a file the readers accept (a gap, a
// TTFT, a run's duration), this package's and sim/lab's alike.
const MaxSeconds = jsonread.MaxSeconds

// Read reads a benchmark tool's result file, telling the tool from the
// file's content (the name only breaks ties and labels the runs). A file can
// hold several runs: a GuideLLM sweep, or SGLang's JSONL with one line
// appended per run. Errors say which formats were tried and why each failed.
func Read(name string, data []byte) ([]*Run, error) {
	if len(data) > jsonread.MaxBytes {
		return nil, sim.Refuse("bench.err.size", "%s: larger than %d bytes", name, jsonread.MaxBytes)
	}
	data, _, _ = pyJSON(bytes.TrimPrefix(data, jsonread.BOM), nil)
	f, err := detectBench(data)
	if err != nil {
		return nil, err
	}
	runs, err := readWhole(f, name, data)
	if err != nil {
		return nil, err
	}
	return labelRuns(name, runs), nil
}

// labelRuns names the runs after the file (and its folder, for the tools
// that name the folder after the run) where they have no label.
func labelRuns(name string, runs []*Run) []*Run {
	dir, base := "", name
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		dir, base = base[:i], base[i+1:]
	}
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".json"), ".jsonl")
	base = strings.TrimSuffix(base, "_individual_responses")
	if strings.HasPrefix(base, "profile_export") && dir != "" {
		// AIPerf and GenAI-Perf name the folder after the run, not the file.
		if j := strings.LastIndexAny(dir, `/\`); j >= 0 {
			dir = dir[j+1:]
		}
		base = dir + "/" + base
	}
	for i, r := range runs {
		if r.Label == "" {
			r.Label = base
			if len(runs) > 1 {
				r.Label = fmt.Sprintf("%s#%d", base, i+1)
			}
		}
		if r.Summary == nil {
			r.Summary = map[string]float64{}
		}
	}
	return runs
}

// IsBench reports whether data looks like a benchmark tool's result file
// that Read reads (and not a lab measured-JSON file): a row of [Formats]
// detects it and reads it.
func IsBench(data []byte) bool {
	_, err := Detect(data)
	return err == nil
}

// keyList is m's keys, sorted, the first dozen ("none" when it has none).
func keyList(m map[string]json.RawMessage) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return "none"
	}
	if len(keys) > 12 {
		keys = append(keys[:12], "...")
	}
	return strings.Join(keys, ", ")
}

func firstLine(data []byte) []byte {
	for len(data) > 0 { // (line by line: a 50 MB file is not split whole for its head)
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if l = bytes.TrimSpace(l); len(l) > 0 {
			return l
		}
	}
	return nil
}

// jsonLines calls f on each non-empty line, naming the line in its error.
func jsonLines(data []byte, f func(line int, raw []byte) error) error {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) == 0 {
			continue
		}
		if err := f(i+1, l); err != nil {
			return sim.Refuse("field.line", "line %d: %v", i+1, err)
		}
	}
	return nil
}

// pyJSON rewrites the NaN and Infinity literals Python's json module writes
// (outside strings) so encoding/json can read the file: NaN becomes null and
// ±Infinity the strings "Infinity" and "-Infinity", which flexNum reads.
// rewrote says whether it changed anything; tk (nil: none) is told of the
// bytes scanned, and its error stops the work.
func pyJSON(data []byte, tk *ticker) (out []byte, rewrote bool, err error) {
	if !containsTick(data, "NaN", tk) && !containsTick(data, "Infinity", tk) {
		return data, false, nil
	}
	buf := make([]byte, 0, len(data)+len(data)/64)
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		if i&(1<<16-1) == 0 {
			if err := tk.add(1<<14, float64(i)/float64(len(data))); err != nil {
				return nil, false, err
			}
		}
		c := data[i]
		if inStr {
			buf = append(buf, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			buf = append(buf, c)
		case bytes.HasPrefix(data[i:], []byte("NaN")):
			buf = append(buf, "null"...)
			i += 2
			rewrote = true
		case bytes.HasPrefix(data[i:], []byte("-Infinity")):
			buf = append(buf, `"-Infinity"`...)
			i += 8
			rewrote = true
		case bytes.HasPrefix(data[i:], []byte("Infinity")):
			buf = append(buf, `"Infinity"`...)
			i += 7
			rewrote = true
		default:
			buf = append(buf, c)
		}
	}
	return buf, rewrote, nil
}

// containsTick is bytes.Contains in windows of a megabyte (overlapping by
// the word's length), ticking between them.
func containsTick(data []byte, word string, tk *ticker) bool {
	const win = 1 << 20
	for lo := 0; lo < len(data); lo += win {
		hi := min(len(data), lo+win+len(word)-1)
		if bytes.Contains(data[lo:hi], []byte(word)) {
			return true
		}
		if tk.add(win/16, 0) != nil {
			return true // the caller stops at its next tick
		}
	}
	return false
}

// flexNum is a number a tool may also write as a string ("inf", "Infinity")
// or null.
type flexNum struct {
	V  float64
	OK bool
}

// UnmarshalJSON reads a number, a numeric or infinite string, or null.
func (f *flexNum) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*f = flexNum{}
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		switch strings.ToLower(str) {
		case "inf", "infinity", "+inf":
			*f = flexNum{math.Inf(1), true}
			return nil
		case "-inf", "-infinity":
			*f = flexNum{math.Inf(-1), true}
			return nil
		}
		var x float64
		if _, err := fmt.Sscan(str, &x); err != nil {
			return sim.Refuse("value.number", "want a number, got %s", fmt.Sprintf("%q", str))
		}
		*f = flexNum{x, true}
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return sim.Refuse("value.number", "want a number, got %s", jsonread.Clip(b))
	}
	*f = flexNum{x, true}
	return nil
}

// val is the value of key read already, if it was.
func (p *preRead) val(key string) (preValue, bool) {
	if p == nil {
		return preValue{}, false
	}
	v, ok := p.vals[key]
	return v, ok
}

func (p *preRead) ticker() *ticker {
	if p == nil {
		return nil
	}
	return p.tk
}

// decodeKeys decodes the listed keys of obj into their destinations,
// skipping absent and null ones, and names the key in an error. The keys
// in pre (nil: none) were read already, in slices, by ReadSliced: their
// values, or the error reading them gave, stand for obj's.
func decodeKeys(obj map[string]json.RawMessage, pre *preRead, where string, dst map[string]any) error {
	keys := make([]string, 0, len(dst))
	for k := range dst {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad key named is the same every time
	for _, k := range keys {
		if p, ok := pre.val(k); ok {
			if p.err != nil {
				return jsonread.FieldError(p.err, where+k)
			}
			reflect.ValueOf(dst[k]).Elem().Set(reflect.ValueOf(p.v))
			continue
		}
		v, ok := obj[k]
		if !ok || string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, dst[k]); err != nil {
			return jsonread.FieldError(err, where+k)
		}
	}
	return nil
}

// checkRequests rejects negative, non-finite or absurd times (over
// MaxSeconds, whose sums would overflow), naming the request; tk (nil:
// none) is told of the values checked.
func checkRequests(rs []Request, tk *ticker) error {
	for i, r := range rs {
		if err := tk.add(1+len(r.Gaps), 1); err != nil {
			return err
		}
		for j, g := range r.Gaps {
			if !(g >= 0 && g <= jsonread.MaxSeconds) {
				return sim.Refuse("bench.err.gap", "request %d: gap %d must be a number of seconds in [0, %g], got %g", i, j, jsonread.MaxSeconds, g)
			}
		}
		for _, f := range []struct {
			name sim.Note // the page names the figure in its language
			v    float64
		}{{sim.Say("bench.field.ttft", "ttft"), r.TTFT}, {sim.Say("bench.field.latency", "latency"), r.Latency}, {sim.Say("bench.field.meanitl", "mean inter-token latency"), r.MeanITL}} {
			if !(f.v >= 0 && f.v <= jsonread.MaxSeconds) {
				return sim.Refuse("bench.err.time", "request %d: %s must be a number of seconds in [0, %g], got %g", i, f.name, jsonread.MaxSeconds, f.v)
			}
		}
		if r.Prompt < 0 || r.Output < 0 {
			return sim.Refuse("bench.err.negative", "request %d: token counts must not be negative (prompt %d, output %d)", i, r.Prompt, r.Output)
		}
	}
	return nil
}

// rebase makes start times relative to the earliest one.
func rebase(rs []Request) {
	first := math.Inf(1)
	for _, r := range rs {
		if !math.IsNaN(r.Start) {
			first = math.Min(first, r.Start)
		}
	}
	if math.IsInf(first, 1) {
		return
	}
	for i := range rs {
		if !math.IsNaN(rs[i].Start) {
			rs[i].Start -= first
		}
	}
}

// msKeys reads a vLLM/SGLang-style summary, {mean,median,p90,p99}_<name>_ms,
// into figures under our name, in seconds.
func msKeys(obj map[string]json.RawMessage, theirs, ours string, into map[string]float64) {
	for _, s := range []struct{ pre, suf string }{{"median", "p50"}, {"p50", "p50"}, {"mean", "mean"}, {"p90", "p90"}, {"p99", "p99"}} {
		var f flexNum
		if _, done := into[ours+"_"+s.suf]; done {
			continue // median and p50 are one figure
		}
		if v, ok := obj[s.pre+"_"+theirs+"_ms"]; ok && json.Unmarshal(v, &f) == nil && f.OK && !math.IsInf(f.V, 0) {
			into[ours+"_"+s.suf] = f.V / 1000
		}
	}
}

// liftDetails moves the per-request arrays some SGLang versions nest under
// "details" up beside the summary, where the others write them.
func liftDetails(obj map[string]json.RawMessage) {
	raw, ok := obj["details"]
	if !ok {
		return
	}
	var d map[string]json.RawMessage
	if json.Unmarshal(raw, &d) != nil {
		return
	}
	if _, ok := d["itls"]; !ok {
		return
	}
	for k, v := range d {
		if _, taken := obj[k]; !taken {
			obj[k] = v
		}
	}
}
