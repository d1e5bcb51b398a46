package sim

// Benchmark tools' result files (vLLM bench, GuideLLM, AIPerf, GenAI-Perf,
// SGLang bench_serving, llmperf), read into one type: BenchRun. Each tool has
// its own small reader file (bench_<tool>.go); this file holds the common
// type, the figures computed from it, and the format detection.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// BenchRequest is one request of a benchmark run as the tool recorded it.
// Times are seconds; a zero Prompt, Output or Latency means the file does not
// say.
type BenchRequest struct {
	Start   float64   // when it was sent, seconds after the run's first request; NaN when the file keeps no start times
	Prompt  int       // prompt tokens
	Output  int       // output tokens
	TTFT    float64   // seconds from sending to the first content chunk
	Latency float64   // seconds from sending to the last content chunk
	Gaps    []float64 // seconds between successive content chunks (one per chunk after the first), when the file keeps them
	MeanITL float64   // the tool's own per-request mean gap between tokens, when the file keeps only that
	Error   string    // why it failed; "" when it succeeded
}

// BenchRun is one run of a benchmark tool: its requests, the load it offered
// and the figures the file itself states.
type BenchRun struct {
	Tool        string  // "vllm", "guidellm", "aiperf", "genai-perf", "sglang" or "llmperf"
	Format      string  // which of the tool's files it came from, in words
	Label       string  // a name for tables
	Model       string  // model benchmarked, when the file says
	Rate        float64 // requests/s the tool was asked to send; +Inf: all at once; 0: unknown
	Concurrency int     // most requests the tool kept in flight; 0: unbounded or unknown
	Duration    float64 // seconds the run took, when known
	Throughput  float64 // completed requests per second as the file states it (summary-only files), else 0
	Requests    []BenchRequest
	// Summary is the file's own figures in seconds, keyed as Figures keys
	// them, holding only the keys whose definition matches ours.
	Summary map[string]float64
	// Method is how the tool takes percentiles: "linear" (numpy's default,
	// interpolating) or "cdf" (GuideLLM: the first value whose cumulative
	// weight reaches p). Figures uses it so they can be checked against Summary.
	Method string
	Cannot []string // figures this format cannot give, and why
	Notes  []string // what was normalised or assumed while reading
}

// Figure keys: each of ttft, tpot, itl, itl_token and e2e with _p50, _p90,
// _p99 or _mean. itl is the gap between content chunks as the file records
// it; itl_token is that gap spread over the tokens the chunk carried (a chunk
// of k tokens counts as k gaps of gap/k), or a request's mean gap counted
// once per token where the file keeps only that; tpot is (e2e − ttft) /
// (output − 1) per request.
var FigureNames = []string{"ttft", "tpot", "itl", "itl_token", "e2e"}

// Figures computes the run's figures from its successful requests, taking
// percentiles as the tool does (Method). A figure the file cannot give is
// absent.
func (b *BenchRun) Figures() map[string]float64 {
	var ttft, tpot, itl, e2e []float64
	var tok []weighted
	for i := range b.Requests {
		r := &b.Requests[i]
		if r.Error != "" {
			continue
		}
		ttft = append(ttft, r.TTFT)
		itl = append(itl, r.Gaps...)
		if r.Latency > 0 {
			e2e = append(e2e, r.Latency)
			if r.Output > 1 {
				tpot = append(tpot, (r.Latency-r.TTFT)/float64(r.Output-1))
			}
		}
		tok = append(tok, r.tokenGaps()...)
	}
	out := map[string]float64{}
	put := func(name string, xs []float64, w []float64) {
		if len(xs) == 0 {
			return
		}
		for _, p := range []float64{50, 90, 99} {
			out[fmt.Sprintf("%s_p%g", name, p)] = b.quantile(xs, w, p)
		}
		out[name+"_mean"] = weightedMean(xs, w)
	}
	put("ttft", ttft, nil)
	put("tpot", tpot, nil)
	put("itl", itl, nil)
	put("e2e", e2e, nil)
	if len(tok) > 0 {
		xs, w := make([]float64, len(tok)), make([]float64, len(tok))
		for i, t := range tok {
			xs[i], w[i] = t.v, t.w
		}
		out["itl_token_p50"] = cdfQuantile(xs, w, 50)
		out["itl_token_p90"] = cdfQuantile(xs, w, 90)
		out["itl_token_p99"] = cdfQuantile(xs, w, 99)
		out["itl_token_mean"] = weightedMean(xs, w)
	}
	return out
}

type weighted struct{ v, w float64 }

// tokenGaps normalises a request's gaps to tokens: with n chunk gaps and
// Output−1 tokens after the first, each gap stands for k = (Output−1)/n
// tokens, each gap/k apart. Without gaps, the tool's mean gap (or, failing
// that, (e2e − ttft)/(output − 1)) counts once per token after the first.
func (r *BenchRequest) tokenGaps() []weighted {
	if n := len(r.Gaps); n > 0 {
		k := 1.0
		if r.Output-1 > n {
			k = float64(r.Output-1) / float64(n)
		}
		out := make([]weighted, n)
		for i, g := range r.Gaps {
			out[i] = weighted{g / k, k}
		}
		return out
	}
	if r.Output < 2 {
		return nil
	}
	m := r.MeanITL
	if m == 0 && r.Latency > 0 {
		m = (r.Latency - r.TTFT) / float64(r.Output-1)
	}
	if m <= 0 {
		return nil
	}
	return []weighted{{m, float64(r.Output - 1)}}
}

// ChunkTokens is the mean number of output tokens a content chunk carried
// (1 when each chunk was one token), over requests with both counts; 0 when
// the file cannot tell.
func (b *BenchRun) ChunkTokens() float64 {
	tokens, chunks := 0, 0
	for _, r := range b.Requests {
		if r.Error == "" && len(r.Gaps) > 0 && r.Output > 1 {
			tokens += r.Output - 1
			chunks += len(r.Gaps)
		}
	}
	if chunks == 0 {
		return 0
	}
	return float64(tokens) / float64(chunks)
}

// Timeline returns every content chunk after a request's first as a gap on
// the run's clock (seconds after its first request was sent), normalised to
// tokens as in Figures' itl_token, sorted by time. Nil when the file keeps
// no start times or no chunk gaps.
func (b *BenchRun) Timeline() []Gap {
	var out []Gap
	for _, r := range b.Requests {
		if r.Error != "" || math.IsNaN(r.Start) || len(r.Gaps) == 0 {
			continue
		}
		k := 1.0
		if r.Output-1 > len(r.Gaps) {
			k = float64(r.Output-1) / float64(len(r.Gaps))
		}
		t := r.Start + r.TTFT
		for _, g := range r.Gaps {
			t += g
			out = append(out, Gap{TRelInject: t, Gap: g / k})
		}
	}
	slices.SortFunc(out, func(a, b Gap) int { return cmpFloat(a.TRelInject, b.TRelInject) })
	return out
}

// chunkNote says that chunks carried several tokens and how the figures
// treat them.
func chunkNote(k float64, itl string) string {
	return fmt.Sprintf("chunks carried %.2f tokens on average, so a chunk gap is not one inter-token gap: itl is per chunk (%s); "+
		"itl_token spreads each gap over the tokens after the first, shared evenly among the request's chunks (the file keeps each request's total, not each chunk's count)", k, itl)
}

// HasStarts reports whether every request's start time is known.
func (b *BenchRun) HasStarts() bool {
	for _, r := range b.Requests {
		if math.IsNaN(r.Start) {
			return false
		}
	}
	return len(b.Requests) > 0
}

// MeanLengths returns the mean prompt and output tokens over the requests
// that state them (0 when none does).
func (b *BenchRun) MeanLengths() (prompt, output float64) {
	var ps, os, pn, on int
	for _, r := range b.Requests {
		if r.Prompt > 0 {
			ps += r.Prompt
			pn++
		}
		if r.Output > 0 {
			os += r.Output
			on++
		}
	}
	if pn > 0 {
		prompt = float64(ps) / float64(pn)
	} else {
		prompt = b.Summary["prompt_tokens_mean"]
	}
	if on > 0 {
		output = float64(os) / float64(on)
	} else {
		output = b.Summary["output_tokens_mean"]
	}
	return prompt, output
}

// Companion names the file the tool writes beside a per-request file with
// its own figures — AIPerf's profile_export_aiperf.json, GenAI-Perf's
// profile_export_genai_perf.json, llmperf's *_summary.json — given the
// per-request file's path; "" when the tool writes none. (Reading it is the
// caller's: sim does no I/O.)
func (b *BenchRun) Companion(path string) string {
	dir, base := "", path
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		dir, base = path[:i+1], path[i+1:]
	}
	switch b.Tool {
	case "llmperf":
		if p, ok := strings.CutSuffix(base, "_individual_responses.json"); ok {
			return dir + p + "_summary.json"
		}
	case "aiperf":
		if base == "profile_export.jsonl" || base == "profile_export_raw.jsonl" {
			return dir + "profile_export_aiperf.json"
		}
		p := strings.TrimSuffix(strings.TrimSuffix(base, ".jsonl"), "_raw")
		if p != base {
			return dir + p + ".json"
		}
	case "genai-perf":
		if p, ok := strings.CutSuffix(base, ".json"); ok && !strings.HasSuffix(p, "_genai_perf") {
			return dir + p + "_genai_perf.json"
		}
	}
	return ""
}

// AchievedRate is requests sent per second over the run: from the start
// times when known, else completed requests over Duration; 0 when neither.
func (b *BenchRun) AchievedRate() float64 {
	n := len(b.Requests)
	if b.HasStarts() && n > 1 {
		last := 0.0
		for _, r := range b.Requests {
			last = math.Max(last, r.Start)
		}
		if last > 0 {
			return float64(n-1) / last
		}
	}
	if b.Duration > 0 && n > 0 {
		return float64(n) / b.Duration
	}
	return b.Throughput
}

// Merge takes a summary-only run of the same tool (a *_summary.json or
// profile_export_*.json beside the per-request file) into b: its figures,
// and the load it states where b does not know it.
func (b *BenchRun) Merge(s *BenchRun) {
	if b.Summary == nil {
		b.Summary = map[string]float64{}
	}
	for k, v := range s.Summary {
		if _, ok := b.Summary[k]; !ok {
			b.Summary[k] = v
		}
	}
	if b.Rate == 0 {
		b.Rate = s.Rate
	}
	if b.Concurrency == 0 {
		b.Concurrency = s.Concurrency
	}
	if b.Duration == 0 {
		b.Duration = s.Duration
	}
	if b.Throughput == 0 {
		b.Throughput = s.Throughput
	}
	kept := b.Cannot[:0]
	for _, c := range b.Cannot {
		if !strings.Contains(c, "beside this file") { // what the companion gave is no longer missing
			kept = append(kept, c)
		}
	}
	b.Cannot = kept
	b.Notes = append(b.Notes, "figures stated by "+s.Format)
}

func (b *BenchRun) quantile(xs, w []float64, p float64) float64 {
	if b.Method == "cdf" {
		return cdfQuantile(xs, w, p)
	}
	return linearQuantile(xs, p)
}

// linearQuantile is numpy's default percentile (and pandas' quantile):
// linear interpolation between the closest ranks.
func linearQuantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	t := pos - float64(lo)
	return s[lo] + (s[lo+1]-s[lo])*t
}

// cdfQuantile is GuideLLM's percentile: values sorted with their weights
// (nil: equal), the first value whose cumulative probability reaches p/100.
func cdfQuantile(xs, w []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	wt := func(i int) float64 {
		if w == nil {
			return 1
		}
		return w[i]
	}
	// Equal values merge into one point, as GuideLLM's np.unique does.
	var vals, ws []float64
	total := 0.0
	for _, i := range idx {
		total += wt(i)
		if n := len(vals); n > 0 && vals[n-1] == xs[i] {
			ws[n-1] += wt(i)
			continue
		}
		vals, ws = append(vals, xs[i]), append(ws, wt(i))
	}
	cum := 0.0
	for i, v := range vals {
		cum += ws[i] / total
		if cum >= p/100 {
			return v
		}
	}
	return vals[len(vals)-1]
}

func weightedMean(xs, w []float64) float64 {
	s, t := 0.0, 0.0
	for i, x := range xs {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		s += x * wi
		t += wi
	}
	if t == 0 {
		return 0
	}
	return s / t
}

// ReadBench reads a benchmark tool's result file, telling the tool from the
// file's content (the name only breaks ties and labels the runs). A file can
// hold several runs: a GuideLLM sweep, or SGLang's JSONL with one line
// appended per run. Errors say which formats were tried and why each failed.
func ReadBench(name string, data []byte) ([]*BenchRun, error) {
	if len(data) > MaxMeasuredBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, MaxMeasuredBytes)
	}
	data = pyJSON(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	kind, err := detectBench(data)
	if err != nil {
		return nil, err
	}
	var runs []*BenchRun
	switch kind {
	case "vllm":
		var r *BenchRun
		r, err = readVLLMRun(data)
		runs = []*BenchRun{r}
	case "sglang":
		runs, err = readSGLang(data)
	case "guidellm":
		runs, err = readGuideLLM(data)
	case "aiperf":
		runs, err = readAIPerf(data)
	case "aiperf-raw":
		runs, err = readAIPerfRaw(data)
	case "nvidia-summary":
		runs, err = readNVSummary(data, name)
	case "genai-perf":
		runs, err = readGenAIPerf(data)
	case "llmperf":
		runs, err = readLLMPerf(data)
	case "llmperf-summary":
		runs, err = readLLMPerfSummary(data)
	}
	if err != nil {
		return nil, err
	}
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
	return runs, nil
}

// IsBench reports whether data looks like a benchmark tool's result file
// that ReadBench reads (and not a lab measured-JSON file).
func IsBench(data []byte) bool {
	_, err := detectBench(pyJSON(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	return err == nil
}

// detectBench tells the format by its keys.
func detectBench(data []byte) (string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err == nil && obj != nil {
		liftDetails(obj)
		has := func(k string) bool { _, ok := obj[k]; return ok }
		switch {
		case has("metadata") && has("metrics"):
			return "aiperf", nil // a one-line profile_export.jsonl
		case has("metadata") && has("responses"):
			return "aiperf-raw", nil
		case has("benchmarks"):
			return "guidellm", nil
		case has("experiments"):
			return "genai-perf", nil
		case has("itls") && (has("server_info") || has("median_e2e_latency_ms") || has("accept_length") || has("details")):
			return "sglang", nil
		case has("itls"):
			return "vllm", nil
		case has("results_ttft_s_mean") || has("results_num_completed_requests"):
			return "llmperf-summary", nil
		case has("time_to_first_token") || has("request_latency") || has("inter_token_latency"):
			return "nvidia-summary", nil
		case has("median_ttft_ms"):
			return "", fmt.Errorf("a benchmark summary without per-request arrays (itls): write it with vLLM's --save-detailed or SGLang's --output-details")
		case has("summary"):
			return "", fmt.Errorf("a lab measured-JSON file, not a benchmark tool's")
		}
		return "", fmt.Errorf("not a known benchmark file (it has keys: %s); vLLM and SGLang write per-request arrays only with --save-detailed or --output-details", keyList(obj))
	}
	var arr []map[string]json.RawMessage
	if err := json.Unmarshal(data, &arr); err == nil {
		if len(arr) == 0 {
			return "", fmt.Errorf("an empty JSON list: no requests")
		}
		if _, ok := arr[0]["ttft_s"]; ok {
			return "llmperf", nil
		}
		return "", fmt.Errorf("a JSON list whose first entry has keys %s; llmperf's *_individual_responses.json has ttft_s", keyList(arr[0]))
	}
	// JSON Lines: AIPerf records, AIPerf raw, or SGLang's appended runs.
	line := firstLine(data)
	var first map[string]json.RawMessage
	if err := json.Unmarshal(line, &first); err != nil || first == nil {
		return "", fmt.Errorf("not JSON, nor JSON Lines of objects")
	}
	liftDetails(first)
	has := func(k string) bool { _, ok := first[k]; return ok }
	switch {
	case has("metrics") && has("metadata"):
		return "aiperf", nil
	case has("responses") && has("metadata"):
		return "aiperf-raw", nil
	case has("itls") || has("median_ttft_ms"):
		return "sglang", nil
	}
	return "", fmt.Errorf("JSON Lines whose first line has keys %s: not AIPerf's (metadata, metrics) nor SGLang's (itls)", keyList(first))
}

func keyList(m map[string]json.RawMessage) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 12 {
		keys = append(keys[:12], "...")
	}
	return strings.Join(keys, ", ")
}

func firstLine(data []byte) []byte {
	for _, l := range bytes.Split(data, []byte("\n")) {
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
			return fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return nil
}

// pyJSON rewrites the NaN and Infinity literals Python's json module writes
// (outside strings) so encoding/json can read the file: NaN becomes null and
// ±Infinity the strings "Infinity" and "-Infinity", which flexNum reads.
func pyJSON(data []byte) []byte {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data
	}
	var out bytes.Buffer
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			out.WriteByte(c)
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
			out.WriteByte(c)
		case bytes.HasPrefix(data[i:], []byte("NaN")):
			out.WriteString("null")
			i += 2
		case bytes.HasPrefix(data[i:], []byte("-Infinity")):
			out.WriteString(`"-Infinity"`)
			i += 8
		case bytes.HasPrefix(data[i:], []byte("Infinity")):
			out.WriteString(`"Infinity"`)
			i += 7
		default:
			out.WriteByte(c)
		}
	}
	return out.Bytes()
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
			return fmt.Errorf("want a number, got %q", str)
		}
		*f = flexNum{x, true}
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return fmt.Errorf("want a number, got %s", clip(b))
	}
	*f = flexNum{x, true}
	return nil
}

// decodeKeys decodes the listed keys of obj into their destinations, skipping
// absent and null ones, and names the key in an error.
func decodeKeys(obj map[string]json.RawMessage, where string, dst map[string]any) error {
	keys := make([]string, 0, len(dst))
	for k := range dst {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad key named is the same every time
	for _, k := range keys {
		v, ok := obj[k]
		if !ok || string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, dst[k]); err != nil {
			return unwrapJSON(err, where+k)
		}
	}
	return nil
}

// checkRequests rejects negative or non-finite times, naming the request.
func checkRequests(rs []BenchRequest) error {
	for i, r := range rs {
		for j, g := range r.Gaps {
			if !(g >= 0) || math.IsInf(g, 0) {
				return fmt.Errorf("request %d: gap %d must be a non-negative number of seconds, got %g", i, j, g)
			}
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"ttft", r.TTFT}, {"latency", r.Latency}, {"mean inter-token latency", r.MeanITL}} {
			if !(f.v >= 0) || math.IsInf(f.v, 0) {
				return fmt.Errorf("request %d: %s must be a non-negative number of seconds, got %g", i, f.name, f.v)
			}
		}
		if r.Prompt < 0 || r.Output < 0 {
			return fmt.Errorf("request %d: token counts must not be negative (prompt %d, output %d)", i, r.Prompt, r.Output)
		}
	}
	return nil
}

// rebase makes start times relative to the earliest one.
func rebase(rs []BenchRequest) {
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
