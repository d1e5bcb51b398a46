package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servelab/sim/internal/floats"
	"servelab/sim/internal/jsonread"
)

// whole is what the page gets from a file read whole: Read's runs or
// error, IsBench, json.Unmarshal's error for the file as one object, and
// ReadVLLM for a vLLM run.
func whole(name string, data []byte) string {
	data = bytes.TrimPrefix(data, jsonread.BOM)
	var probe map[string]json.RawMessage
	perr := json.Unmarshal(data, &probe)
	runs, err := Read(name, data)
	var v *VLLM
	if err == nil && runs[0].Tool == "vllm" {
		v, _ = ReadVLLM(bytes.NewReader(data))
	}
	return describe(runs, err, perr, IsBench(data), v)
}

func sliced(name string, data []byte, chunk int) string {
	res, err := readSliced(name, bytes.TrimPrefix(data, jsonread.BOM), func(float64) error { return nil }, chunk)
	return describe(res.Runs, err, res.NotObject, res.Known, res.VLLM)
}

func describe(runs []*Run, err, perr error, known bool, v *VLLM) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "err=%v\nnotObject=%v\nknown=%v\n", err, perr, known)
	for _, r := range runs {
		figs, _ := r.Figures(nil)
		tl, _ := r.Timeline(nil)
		fmt.Fprintf(&sb, "run %+v\nfigures %v\ntimeline %v\n", *r, figs, tl)
	}
	if v != nil {
		fmt.Fprintf(&sb, "vllm %+v\n", *v)
	}
	return sb.String()
}

// fixtures are the tools' files in testdata, and files made to take the
// sliced reader's other paths (a line long enough to be read in slices,
// Python's literals, nested details, a list of rows).
func fixtures(t *testing.T) map[string][]byte {
	files := map[string][]byte{}
	filepath.WalkDir(filepath.Join("..", "testdata", "bench"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".jsonl")) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[p] = data
		}
		return nil
	})
	if len(files) < 8 {
		t.Fatalf("only %d fixtures", len(files))
	}
	// A SGLang file of two runs, each a line over bigLine.
	var line strings.Builder
	line.WriteString(`{"backend": "sglang", "request_rate": Infinity, "median_ttft_ms": 12.5, "server_info": {"v": "0.4"}, "details": {"input_lens": [`)
	n := 3000
	for i := range n {
		fmt.Fprintf(&line, "%s%d", sep(i), 100+i%7)
	}
	line.WriteString(`], "output_lens": [`)
	for i := range n {
		fmt.Fprintf(&line, "%s%d", sep(i), 5+i%4)
	}
	line.WriteString(`], "ttfts": [`)
	for i := range n {
		fmt.Fprintf(&line, "%s0.%03d123456789", sep(i), 10+i%90)
	}
	line.WriteString(`], "itls": [`)
	for i := range n {
		fmt.Fprintf(&line, `%s[0.0123456789012345, 0.0%d34567890123456, 0.011, 0.0199999]`, sep(i), i%10)
	}
	line.WriteString(`], "errors": [`)
	for i := range n {
		e := `""`
		if i%97 == 5 {
			e = `"timeout \u00e9t\u00e9 — é"`
		}
		fmt.Fprintf(&line, "%s%s", sep(i), e)
	}
	line.WriteString(`], "generated_texts": [`)
	for i := range n {
		fmt.Fprintf(&line, `%s"token NaN Infinity \"quoted\" 中文 %d"`, sep(i), i)
	}
	line.WriteString("]}}")
	files["big.jsonl"] = []byte(line.String() + "\n\n" + strings.Replace(line.String(), "Infinity,", "4,", 1) + "\n")
	// vLLM: one object over many lines, with start times and NaN.
	var starts strings.Builder
	for i := range n {
		fmt.Fprintf(&starts, "%s%d.%d", sep(i), 1000+i/3, i%3) // ties: chunks of two requests at one time
	}
	v := strings.Replace(strings.Replace(line.String(), `"details": {`, "\n", 1), `"server_info": {"v": "0.4"}, `, `"duration": NaN, "start_times": [`+starts.String()+`],`+"\n", 1)
	v = strings.TrimSuffix(v, "}}") + "}\n"
	files["vllm-big.json"] = []byte("\xef\xbb\xbf" + strings.Replace(v, `"median_ttft_ms": 12.5,`, "", 1))
	files["vllm-nostart.json"] = []byte(strings.Replace(strings.Replace(v, `"start_times": [`+starts.String()+`],`, "", 1), `"median_ttft_ms": 12.5,`, "", 1))
	return files
}

func sep(i int) string {
	if i == 0 {
		return ""
	}
	return ", "
}

// The sliced reader gives what the whole one gives, on every tool's file,
// with the decoder given the file one byte at a time (every split point:
// inside strings, numbers, UTF-8 sequences, lines) and in other slices.
func TestBenchSlicedMatchesWhole(t *testing.T) {
	for name, data := range fixtures(t) {
		want := whole(name, data)
		if strings.HasPrefix(want, "err=<nil>") == false {
			t.Errorf("%s: the fixture does not read: %.300s", name, want)
		}
		for _, chunk := range []int{0, 1, 3, 4096} {
			if chunk == 1 && len(data) > 300<<10 {
				chunk = 2
			}
			if got := sliced(name, data, chunk); got != want {
				t.Errorf("%s (chunk %d): sliced reading differs\n%s", name, chunk, firstDiff(got, want))
			}
		}
	}
}

func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-200)
	return fmt.Sprintf("got  ...%.400s\nwant ...%.400s", got[lo:], want[lo:])
}

// Broken files: cut short anywhere, a byte changed, wrong types, keys
// missing. The sliced reader's error (and how the page words it) is the
// whole reader's.
func TestBenchSlicedErrorsMatchWhole(t *testing.T) {
	files := fixtures(t)
	var cases []struct {
		name string
		data []byte
	}
	add := func(name string, data []byte) {
		cases = append(cases, struct {
			name string
			data []byte
		}{name, data})
	}
	for name, data := range files {
		if len(data) > 64<<10 {
			data = data[:64<<10] // the cut and the changes land in the first part
		}
		for i := 1; i < len(data); i += max(1, len(data)/16) {
			add(fmt.Sprintf("%s cut at %d", name, i), data[:i])
			for _, c := range []byte{'x', '"', '}', ']', ',', '\n', '['} {
				changed := bytes.Clone(data)
				changed[i] = c
				add(fmt.Sprintf("%s byte %d is %q", name, i, c), changed)
			}
		}
	}
	for _, doc := range []string{
		`{"itls": [[0.1, "x"], [0.2]], "ttfts": [0.1, "y"]}`,
		`{"itls": [[0.1], [0.2]], "ttfts": [0.1, 0.2], "input_lens": [1, 2.5]}`,
		`{"itls": 5}`, `{"itls": null, "ttfts": []}`, `{"itls": [[0.1]], "ttfts": [0.1, 0.2]}`,
		`{"itls": [[0.1, -1]], "ttfts": [0.1]}`, `{"itls": [[1e308, 1e308]], "ttfts": [0.1]}`,
		`{"benchmarks": []}`, `{"benchmarks": 3}`, `{"benchmarks": [3]}`, `{"benchmarks": [null]}`,
		`{"benchmarks": [{"requests": {"successful": [{"time_to_first_token_ms": -5}]}}]}`,
		`{"benchmarks": [{"requests": {"successful": [{"time_to_first_token_ms": "x"}]}, "metrics": {"time_to_first_token_ms": 4}}]}`,
		`{"benchmarks": [{"metrics": {"time_to_first_token_ms": 4}, "requests": {"successful": [{"time_to_first_token_ms": "x"}]}}]}`,
		`{"Benchmarks": [{"requests": {"Successful": [{"time_to_first_token_ms": 5, "request_latency": 1}]}}], "benchmarks": []}`,
		`{"experiments": [{"requests": [{"response_timestamps": [1]}]}]}`,
		`{"experiments": [{"experiment": {"mode": 5}, "requests": [{"timestamp": "x"}]}]}`,
		`{"experiments": [7]}`, `{"experiments": {}}`,
		`[{"x": 1}]`, `[]`, `[1, 2]`, `[{"ttft_s": "x"}]`, `[{"ttft_s": 0.1}, null]`, `[{"ttft_s": 0.1}] [`,
		`{"summary": {}, "gaps": []}`, `{"median_ttft_ms": 3}`, `{"hello": 1}`, "not json", "", "null", `{"a": NaN, "b": 1 2}`,
		`{"itls": [[0.1]]} {"itls": [[0.2]]}`, "{\"itls\": [[0.1]], \"median_ttft_ms\": 1}\n{\"itls\": [[0.2]]}\nnope\n",
		"{\"itls\": [[0.1]],\n\"median_ttft_ms\": 1}\n{\"itls\": [[0.2]]}\n",
		"{\"metadata\": {}, \"metrics\": {}}\n{\"metadata\": {}, \"metrics\": {\"request_latency\": {\"value\": \"x\"}}}\n",
		`{"details": {"itls": [[0.1]], "ttfts": [0.1]}, "itls": 5, "median_ttft_ms": 2}`,
		`{"details": [1], "itls": [[0.1]], "ttfts": [0.1]}`,
	} {
		add(doc, []byte(doc))
	}
	bad := 0
	for _, c := range cases {
		want := whole("x.json", c.data)
		if !strings.HasPrefix(want, "err=<nil>") {
			bad++
		}
		for _, chunk := range []int{0, 5} {
			if got := sliced("x.json", c.data, chunk); got != want {
				t.Errorf("%s (chunk %d):\n%s", c.name, chunk, firstDiff(got, want))
				break
			}
		}
	}
	if bad < len(cases)/2 {
		t.Errorf("only %d of %d broken files were refused", bad, len(cases))
	}
}

// The reader calls its Tick as it goes, with the fraction read growing,
// and stops at once with the Tick's error.
func TestBenchSlicedTicksAndStops(t *testing.T) {
	data := fixtures(t)["big.jsonl"]
	var fracs []float64
	if _, err := ReadSliced("big.jsonl", data, func(f float64) error { fracs = append(fracs, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := len(data) / tickUnits / 2; len(fracs) < want {
		t.Errorf("%d ticks for %d bytes, want at least %d", len(fracs), len(data), want)
	}
	for i := 1; i < len(fracs); i++ {
		if fracs[i] < fracs[i-1] || fracs[i] > 1 {
			t.Fatalf("tick %d: fraction %g after %g", i, fracs[i], fracs[i-1])
		}
	}
	stop := errors.New("cancelled")
	n := 0
	_, err := ReadSliced("big.jsonl", data, func(float64) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("a Tick's error: got %v after %d ticks", err, n)
	}
	b := &Run{Method: "linear"}
	for i := range 2000 {
		r := Request{Start: float64(i % 17), TTFT: 0.1, Latency: 3, Output: 200}
		for j := range 199 {
			r.Gaps = append(r.Gaps, float64((i*j)%31)/1000)
		}
		b.Requests = append(b.Requests, r)
	}
	if _, err := b.Figures(func(float64) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Figures went on past its Tick's error: %v", err)
	}
	calls := 0
	plain, _ := b.Figures(nil)
	if f, err := b.Figures(func(float64) error { calls++; return nil }); err != nil || fmt.Sprint(f) != fmt.Sprint(plain) || calls < 5 {
		t.Errorf("Figures: %v, %d ticks, figures %v against %v", err, calls, f, plain)
	}
	if _, err := b.Timeline(func(float64) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Timeline went on past its Tick's error: %v", err)
	}
}

// The merge sort is stable and sorts.
func TestSortTickIsStable(t *testing.T) {
	xs := make([]weighted, 5000)
	for i := range xs {
		xs[i] = weighted{float64((i * 7919) % 113), float64(i)}
	}
	sortTick(xs, func(a, b weighted) int { return floats.Compare(a.v, b.v) }, &ticker{}, 0)
	for i := 1; i < len(xs); i++ {
		if xs[i].v < xs[i-1].v || (xs[i].v == xs[i-1].v && xs[i].w < xs[i-1].w) {
			t.Fatalf("at %d: %v after %v", i, xs[i], xs[i-1])
		}
	}
}

// A trace read in slices is the trace read whole, good or broken, and
// its Tick can stop it.
func TestTraceSlicedMatchesWhole(t *testing.T) {
	files := map[string][]byte{}
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "traces", "*"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = data
	}
	var csv, jsonl strings.Builder
	csv.WriteString("arrival,prompt_len,output_len\n")
	for i := range 40000 {
		fmt.Fprintf(&csv, "%d.%03d,%d,%d\n", (i*7919)%5000, i%1000, 100+i%50, 1+i%9) // out of order, with ties
		fmt.Fprintf(&jsonl, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [1, 2]}`+"\n", (i*31)%9000, 10+i%77, 1+i%5)
	}
	files["big.csv"], files["big.jsonl"] = []byte(csv.String()), []byte(jsonl.String())
	for name, data := range files {
		var cases [][]byte
		cases = append(cases, data)
		small := data[:min(len(data), 4096)]
		for i := 1; i < len(small); i += max(1, len(small)/12) {
			changed := bytes.Clone(small)
			changed[i] = 'x'
			cases = append(cases, small[:i], changed)
		}
		for _, c := range cases {
			want, werr := ReadTrace(name, c, 0, nil)
			ticks := 0
			got, gerr := ReadTrace(name, c, 0, func(float64) error { ticks++; return nil })
			if fmt.Sprint(got, gerr) != fmt.Sprint(want, werr) {
				t.Errorf("%s (%d bytes): sliced %.200v %v, whole %.200v %v", name, len(c), got, gerr, want, werr)
			}
			if len(c) > 512<<10 && ticks < len(c)/tickUnits/2 {
				t.Errorf("%s: %d ticks for %d bytes", name, ticks, len(c))
			}
		}
	}
	stop := errors.New("cancelled")
	if _, err := ReadTrace("big.csv", files["big.csv"], 0, func(float64) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("a Tick's error did not stop the trace: %v", err)
	}
}

// Whatever the bytes, the sliced reader says what the whole one says.
func FuzzBenchSliced(f *testing.F) {
	for _, name := range []string{"vllm.json", "sglang.jsonl", "guidellm_v02.json", "llmperf/m_550_150_individual_responses.json", "genai-perf/profile_export.json", "aiperf/profile_export.jsonl"} {
		if data, err := os.ReadFile(filepath.Join("..", "testdata", "bench", name)); err == nil {
			f.Add(data[:min(len(data), 3000)])
		}
	}
	f.Add([]byte(`{"itls": [[0.1, NaN]], "details": {"itls": [[1]]}, "server_info": {}}` + "\n" + `{"itls": [[2]]}`))
	f.Add([]byte(`{"benchmarks": [{"requests": {"successful": [{"time_to_first_token_ms": 5}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if want, got := whole("f.json", data), sliced("f.json", data, 0); got != want {
			t.Fatalf("sliced reading differs\n%s", firstDiff(got, want))
		}
	})
}

// Thousands of mutated files (bytes changed, cut out, put in): the sliced
// reader says what the whole one says of each.
func TestBenchSlicedMutations(t *testing.T) {
	var seeds [][]byte
	for _, name := range []string{"vllm.json", "sglang.jsonl", "guidellm_v02.json", "llmperf/m_550_150_individual_responses.json", "genai-perf/profile_export.json", "aiperf/profile_export.jsonl", "aiperf/profile_export_raw.jsonl"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "bench", name))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data[:min(len(data), 3000)])
	}
	rng := uint64(1)
	next := func(n int) int { // a fixed sequence: the same files every run
		rng = rng*6364136223846793005 + 1442695040888963407
		return int((rng >> 33) % uint64(n))
	}
	alphabet := []byte(`{}[],:"0123456789.-eNaIfinty \n\\u`)
	for range 4000 {
		d := bytes.Clone(seeds[next(len(seeds))])
		for k := next(4) + 1; k > 0; k-- {
			i := next(len(d))
			switch next(3) {
			case 0:
				d[i] = alphabet[next(len(alphabet))]
			case 1:
				d = append(d[:i], d[min(len(d), i+next(20)):]...)
			default:
				d = append(d[:i], append([]byte{alphabet[next(len(alphabet))]}, d[i:]...)...)
			}
			if len(d) == 0 {
				d = []byte("{")
			}
		}
		if got, want := sliced("f.json", d, 0), whole("f.json", d); got != want {
			t.Fatalf("%q:\n%s", d, firstDiff(got, want))
		}
	}
}
