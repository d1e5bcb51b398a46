package results

// The format table: every kind of file the package tells apart, in the
// order they are tried. A new format is one file with its reader and one
// row here (plus its notes' catalogue keys).

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"servelab/sim"
	"servelab/sim/internal/jsonread"
)

// Shape is how a file holds its JSON at the top level.
type Shape int

const (
	// Object is a file that is one JSON object.
	Object Shape = iota
	// Lines is JSON Lines: one object per line (a one-line file is an Object).
	Lines
	// List is a file that is one JSON list of objects.
	List
)

// Format is one row of [Formats]: a kind of file, how to tell it and how
// to read it.
type Format struct {
	Name string // the row's name: "vllm", "aiperf-raw", "llmperf-summary", "lab", ...
	Tool string // the tool that writes it, as Run.Tool names it ("run.py" for the lab's files)
	Key  string // the page catalogue's key for its name, "" when the page shows the tool's own name
	// Detect reports whether a file of the given shape is this format, from
	// the top-level keys of its object, of its first line or of its list's
	// first entry (SGLang's "details" lifted beside the others).
	Detect func(shape Shape, keys map[string]json.RawMessage) bool
	// Trace says the format is a request trace (arrivals and lengths, no
	// measured times): a front end may take it as a workload.
	Trace bool

	// How the format is read: by one of read, lines or list (whole and in
	// slices alike), or not at all (refuse says why).

	// read reads the whole file (BOM trimmed, Python's literals rewritten);
	// name is the file's.
	read func(name string, data []byte) ([]*Run, error)
	// lines is a new reader of the format's JSON Lines, a line at a time.
	lines func() lineReader
	// list is a new reader of the format's JSON list, an entry at a time.
	list func() lineReader
	// refuse is why a detected file is not read here (nil: it is).
	refuse error
	// object reads a file that is one object in slices, from its keys read
	// already (nil: such a file is read whole).
	object func(sr *sliceRead, o *jobj, start, end int) ([]*Run, error)
}

// lineReader reads a file one value at a time: the non-empty lines of
// JSON Lines, or the entries of a list.
type lineReader interface {
	line(raw []byte) error
	finish() ([]*Run, error)
}

// objectLiner is a lineReader that also takes a line read in slices as an
// object (keys, and the values read already).
type objectLiner interface {
	object(keys map[string]json.RawMessage, pre *preRead) error
}

// Formats are the kinds of file the package tells apart, tried in this
// order: the first whose Detect says yes is the file's format.
var Formats = []Format{
	{Name: "lab", Tool: "run.py", Key: "ovkind.lab", Detect: objectWith("summary"),
		refuse: sim.Refuse("bench.err.lab", "a lab measured-JSON file, not a benchmark tool's")},
	{Name: "aiperf", Tool: "aiperf", Detect: objectOrLinesWithAll("metadata", "metrics"),
		lines: newAIPerfLines},
	{Name: "aiperf-raw", Tool: "aiperf", Detect: objectOrLinesWithAll("metadata", "responses"),
		lines: newAIPerfRawLines},
	{Name: "guidellm", Tool: "guidellm", Detect: objectWith("benchmarks"),
		read: readGuideLLM, object: guideObject},
	{Name: "genai-perf", Tool: "genai-perf", Detect: objectWith("experiments"),
		read: readGenAIPerf, object: genaiObject},
	{Name: "sglang", Tool: "sglang", Detect: sglangDetect,
		lines: newSGLangLines, object: sglangObject},
	{Name: "vllm", Tool: "vllm", Detect: objectWith("itls"),
		read: readVLLMRun, object: vllmObject},
	{Name: "llmperf-summary", Tool: "llmperf", Detect: objectWith("results_ttft_s_mean", "results_num_completed_requests"),
		read: readLLMPerfSummary},
	// NVIDIA's summary is GenAI-Perf's and AIPerf's: the run's Tool says whose.
	{Name: "nvidia-summary", Tool: "genai-perf", Detect: nvDetect,
		read: readNVSummary},
	{Name: "vllm-summary", Tool: "vllm", Detect: objectWith("median_ttft_ms"),
		read: readVLLMSummary},
	{Name: "llmperf", Tool: "llmperf", Detect: listWith("ttft_s"),
		list: newLLMPerfList},
	{Name: "inference-perf", Tool: "inference-perf", Detect: listWithAll("start_time", "end_time", "info"),
		list: newInferencePerfList},
	{Name: "inference-perf-summary", Tool: "inference-perf", Detect: objectWithAll("successes", "load_summary"),
		read: readInferencePerfSummary},
	// A request trace, not a benchmark's result: arrivals and lengths.
	{Name: "mooncake", Tool: "mooncake", Detect: mooncakeDetect, Trace: true,
		lines: newMooncakeLines},
}

// objectWith detects a one-object file with any of keys.
func objectWith(keys ...string) func(Shape, map[string]json.RawMessage) bool {
	return func(s Shape, m map[string]json.RawMessage) bool { return s == Object && hasAny(m, keys) }
}

// listWith detects a list whose first entry has any of keys.
func listWith(keys ...string) func(Shape, map[string]json.RawMessage) bool {
	return func(s Shape, m map[string]json.RawMessage) bool { return s == List && hasAny(m, keys) }
}

// listWithAll detects a list whose first entry has all of keys.
func listWithAll(keys ...string) func(Shape, map[string]json.RawMessage) bool {
	return func(s Shape, m map[string]json.RawMessage) bool { return s == List && hasAll(m, keys...) }
}

// objectWithAll detects a one-object file with all of keys.
func objectWithAll(keys ...string) func(Shape, map[string]json.RawMessage) bool {
	return func(s Shape, m map[string]json.RawMessage) bool { return s == Object && hasAll(m, keys...) }
}

// objectOrLinesWithAll detects an object, or JSON Lines' first line, with all of keys.
func objectOrLinesWithAll(keys ...string) func(Shape, map[string]json.RawMessage) bool {
	return func(s Shape, m map[string]json.RawMessage) bool {
		return s != List && hasAll(m, keys...)
	}
}

// sglangDetect: SGLang's file is JSON Lines with itls (or only its summary);
// a one-line file has itls and one of the keys SGLang writes and vLLM does not.
func sglangDetect(s Shape, m map[string]json.RawMessage) bool {
	switch s {
	case Lines:
		return hasAny(m, []string{"itls", "median_ttft_ms"})
	case Object:
		return hasAny(m, []string{"itls"}) && hasAny(m, []string{"server_info", "median_e2e_latency_ms", "accept_length", "details"})
	}
	return false
}

// hasAll reports whether m has every one of keys.
func hasAll(m map[string]json.RawMessage, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

func hasAny(m map[string]json.RawMessage, keys []string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// Detect tells a file's format from its content: the first row of
// [Formats] whose Detect says yes. It returns the row and, for a row the
// package does not read (a lab file, a summary without requests), the
// refusal; for a file no row detects, a nil row and an error that says
// what was seen (the keys, or the first bytes).
func Detect(data []byte) (*Format, error) {
	d, _, _ := pyJSON(bytes.TrimPrefix(data, jsonread.BOM), nil)
	return detectBench(d)
}

// TraceByFirstLine reports whether data is JSON Lines whose first line is
// a record of a format the table names a trace (a Mooncake trace): a test
// a page can afford on any upload, however large (Detect parses the whole
// file at once).
func TraceByFirstLine(data []byte) bool {
	line := firstLine(bytes.TrimPrefix(data, jsonread.BOM))
	if len(line) > 1<<16 { // a trace's record is short; a whole file on one line is no trace's
		return false
	}
	var first map[string]json.RawMessage
	if err := json.Unmarshal(line, &first); err != nil || first == nil {
		return false
	}
	liftDetails(first)
	f, err := detectLines(first)
	return err == nil && f != nil && f.Trace
}

// detectBench is Detect of a file whose BOM is trimmed and Python literals rewritten.
func detectBench(data []byte) (*Format, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err == nil && obj != nil {
		liftDetails(obj)
		return detectObject(obj)
	}
	var arr []map[string]json.RawMessage
	if err := json.Unmarshal(data, &arr); err == nil && arr != nil {
		return detectList(len(arr), arr)
	}
	// JSON Lines: AIPerf records, AIPerf raw, or SGLang's appended runs.
	line := firstLine(data)
	var first map[string]json.RawMessage
	if err := json.Unmarshal(line, &first); err != nil || first == nil {
		return nil, notJSON(data)
	}
	liftDetails(first)
	return detectLines(first)
}

// find is the first row that detects keys in shape, and its refusal.
func find(shape Shape, keys map[string]json.RawMessage) (*Format, bool, error) {
	for i := range Formats {
		if f := &Formats[i]; f.Detect(shape, keys) {
			return f, true, f.refuse
		}
	}
	return nil, false, nil
}

// detectObject tells a file that is one JSON object by its keys.
func detectObject(obj map[string]json.RawMessage) (*Format, error) {
	if f, ok, err := find(Object, obj); ok {
		return f, err
	}
	return nil, sim.Refuse("bench.err.unknown", "not a known benchmark file (it has keys: %s; formats tried: %s); vLLM and SGLang write per-request arrays only with --save-detailed or --output-details", keyList(obj), Tried())
}

// detectList tells a file that is one JSON list of n objects by its first.
func detectList(n int, arr []map[string]json.RawMessage) (*Format, error) {
	if n == 0 {
		return nil, sim.Refuse("bench.err.emptylist", "an empty JSON list: no requests")
	}
	if f, ok, err := find(List, arr[0]); ok {
		return f, err
	}
	return nil, sim.Refuse("bench.err.list", "a JSON list whose first entry has keys %s (formats tried: %s); llmperf's *_individual_responses.json has ttft_s, inference-perf's per_request_lifecycle_metrics.json start_time, end_time and info", keyList(arr[0]), Tried())
}

// detectLines tells JSON Lines by the keys of the first line.
func detectLines(first map[string]json.RawMessage) (*Format, error) {
	if f, ok, err := find(Lines, first); ok {
		return f, err
	}
	return nil, sim.Refuse("bench.err.lines", "JSON Lines whose first line has keys %s (formats tried: %s): not AIPerf's (metadata, metrics), SGLang's (itls) nor a Mooncake trace's (timestamp, input_length, output_length)", keyList(first), Tried())
}

// Tried names the rows of [Formats] in the order Detect tries them, for
// the refusal of a file none of them detects.
func Tried() string { return tried }

// tried is Tried's list, made once Formats is (Formats' readers refuse
// with it, so it cannot be made from Formats in Formats' own initialiser).
var tried string

func init() {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = f.Name
	}
	tried = strings.Join(names, ", ")
}

// notJSON is the refusal of a file that is not an object, a list of
// objects nor JSON Lines of objects; it quotes the file's first bytes.
func notJSON(data []byte) error {
	head := bytes.TrimSpace(data)
	if len(head) > 24 {
		head = append(head[:24:24], "..."...)
	}
	return sim.Refuse("bench.err.notjson", "not JSON, nor JSON Lines of objects (it starts %s; formats tried: %s, all JSON)", strconv.Quote(string(head)), Tried())
}

// readWhole reads a file of format f whole (BOM trimmed, Python's
// literals rewritten): with the row's reader, a line or an entry at a time
// where it reads so; a row that reads nothing gives its refusal.
func readWhole(f *Format, name string, data []byte) ([]*Run, error) {
	switch {
	case f.refuse != nil:
		return nil, f.refuse
	case f.read != nil:
		return f.read(name, data)
	case f.lines != nil:
		lr := f.lines()
		if err := jsonLines(data, func(line int, raw []byte) error { return lr.line(raw) }); err != nil {
			return nil, err
		}
		return lr.finish()
	case f.list != nil:
		var entries []json.RawMessage
		if err := json.Unmarshal(data, &entries); err != nil {
			return nil, notJSON(data)
		}
		lr := f.list()
		for _, e := range entries {
			if err := lr.line(e); err != nil {
				return nil, err
			}
		}
		return lr.finish()
	}
	return nil, sim.Refuse("bench.err.noreader", "%s: a %s file, which servelab does not read", name, f.Name)
}
