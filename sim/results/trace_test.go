package results

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"servelab/sim"
)

// req is the request of the given id, arrival (seconds) and lengths.
func req(id int, arrival float64, prompt, output int) sim.Request {
	return sim.Request{ID: id, Arrival: arrival, Prompt: prompt, Output: output}
}

// blocks gives r prefix blocks named ids, of Mooncake's 512 tokens.
func blocks(r sim.Request, ids ...uint64) sim.Request {
	r.Blocks, r.BlockTokens = ids, MooncakeBlockTokens
	return r
}

func readTraceFile(t *testing.T, path string) []sim.Request {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := ReadTrace(filepath.Base(path), data, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// The example traces read as written: sorted by arrival, ids from the file
// or its record order, date-times relative to the first, milliseconds scaled.
func TestReadTraceExamples(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []sim.Request // nil: only the count and order are checked
		n    int
	}{
		{file: "lab_burst.csv", n: 10},
		{file: "crlf_extra_columns.csv", want: []sim.Request{
			req(7, 0.25, 512, 64), req(8, 0.5, 512, 64), req(9, 0.5, 1024, 128), req(10, 2.125, 300, 20)}},
		{file: "mixed_order.jsonl", want: []sim.Request{
			req(2, 0.1, 512, 64), req(3, 0.1, 256, 16), req(1, 0.5, 2048, 128), req(4, 1.75, 64, 1)}},
		// hash_ids become the requests' prefix blocks (512 tokens each), as the engine's cache reads them.
		{file: "mooncake_style.jsonl", want: []sim.Request{
			blocks(req(0, 0, 6955, 52), 0, 1, 2, 3), blocks(req(1, 0.25, 812, 300), 0, 4), blocks(req(2, 1.5, 12000, 8), 5, 6, 7)}},
		// Mooncake's own format: a plain "timestamp", in milliseconds.
		{file: "mooncake.jsonl", want: []sim.Request{
			blocks(req(0, 0, 6755, 500), 0, 1, 2), blocks(req(1, 0, 7319, 490), 0, 3), blocks(req(2, 3.052, 2287, 316), 4)}},
	} {
		reqs := readTraceFile(t, filepath.Join("..", "testdata", "traces", tc.file))
		if tc.want != nil && !reflect.DeepEqual(reqs, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.file, reqs, tc.want)
		}
		if tc.n != 0 && len(reqs) != tc.n {
			t.Errorf("%s: %d requests, want %d", tc.file, len(reqs), tc.n)
		}
		if err := validTrace(reqs); err != nil {
			t.Errorf("%s: %v", tc.file, err)
		}
	}
	az := readTraceFile(t, filepath.Join("..", "testdata", "traces", "azure_style.csv"))
	wantAt := []float64{0, 4.314579, 4.56941, 4.56941, 16.3194101}
	for i, r := range az {
		if math.Abs(r.Arrival-wantAt[i]) > 1e-9 || r.ID != i {
			t.Errorf("azure_style.csv request %d: %+v, want arrival %g", i, r, wantAt[i])
		}
	}
	if az[2].Prompt != 879 || az[3].Prompt != 91 {
		t.Errorf("equal date-times lost file order: %v", az)
	}
}

// ReadTrace's unit overrides the column name's, for numbers only.
func TestReadTraceUnit(t *testing.T) {
	csv := "timestamp,prompt,output\n0,10,1\n1500,10,1\n"
	for _, tc := range []struct {
		unit float64
		want float64
	}{{0, 1500}, {1, 1500}, {1e-3, 1.5}, {1e-6, 0.0015}} {
		reqs, err := ReadTrace("t.csv", []byte(csv), tc.unit, nil)
		if err != nil || len(reqs) != 2 || math.Abs(reqs[1].Arrival-tc.want) > 1e-12 {
			t.Errorf("unit %g: %v %v, want the second arrival at %g s", tc.unit, reqs, err, tc.want)
		}
	}
	// A Mooncake trace read with the unit set to seconds says so.
	f, _ := os.ReadFile(filepath.Join("..", "testdata", "traces", "mooncake.jsonl"))
	if reqs, err := ReadTrace("m.jsonl", f, 1, nil); err != nil || reqs[2].Arrival != 3052 {
		t.Errorf("mooncake in seconds: %v %v", reqs, err)
	}
	// Date-times do not change with the unit.
	az, _ := os.ReadFile(filepath.Join("..", "testdata", "traces", "azure_style.csv"))
	if reqs, err := ReadTrace("az.csv", az, 1e-3, nil); err != nil || math.Abs(reqs[1].Arrival-4.314579) > 1e-9 {
		t.Errorf("date-times with a unit: %v %v", reqs, err)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := ReadTrace("t.csv", []byte(csv), bad, nil); err == nil || !strings.Contains(err.Error(), "arrival unit") {
			t.Errorf("unit %g: %v", bad, err)
		}
	}
}

// validTrace is what every accepted trace must satisfy.
func validTrace(reqs []sim.Request) error {
	if len(reqs) == 0 || len(reqs) > sim.MaxRequests {
		return fmt.Errorf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if !finite(r.Arrival) || r.Arrival < 0 || r.Prompt < 1 || r.Prompt > sim.MaxTokens || r.Output < 1 || r.Output > sim.MaxTokens {
			return fmt.Errorf("request %d is invalid: %+v", i, r)
		}
		if i > 0 && r.Arrival < reqs[i-1].Arrival {
			return fmt.Errorf("request %d arrives at %g, before %g", i, r.Arrival, reqs[i-1].Arrival)
		}
	}
	return nil
}

func TestReadTraceCSVAndJSONLAgree(t *testing.T) {
	csvText := "Arrival_Time , Prompt-Len,OUTPUT\r\n0.5,100,10\r\n\r\n0.25,200.0,20\r\n"
	jsonl := "\r\n{\"arrival\":0.5,\"prompt\":100,\"output\":\"10\"}\r\n\r\n{\"arrival\":\"0.25\",\"prompt\":2e2,\"output\":20}\r\n"
	a, err := ReadTrace("a.csv", []byte(csvText), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadTrace("b.jsonl", []byte("\xef\xbb\xbf"+jsonl), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []sim.Request{req(1, 0.25, 200, 20), req(0, 0.5, 100, 10)}
	if !reflect.DeepEqual(a, want) || !reflect.DeepEqual(b, want) {
		t.Fatalf("csv %v, jsonl %v, want %v", a, b, want)
	}
}

func TestWriteTraceRoundTrip(t *testing.T) {
	reqs, err := sim.PoissonLengths(500, 37, sim.LogNormal(6, 1, 1, 32000), sim.Uniform(1, 900), 3)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTrace(&buf, reqs); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrace("poisson.csv", buf.Bytes(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, reqs) {
		t.Fatal("a written trace did not read back identically")
	}
}

func TestReadTraceErrors(t *testing.T) {
	const hdr = "arrival,prompt_len,output_len\n"
	for _, tc := range []struct{ in, want string }{
		// Line numbers count every line: header, comments and blank lines.
		{"# comment\narrival,prompt_len,output_len\n0,1,1\n\n0.1,2,2\n# another\n0.2,3,abc\n",
			`trace.csv line 7: output_len "abc" is not an integer`},
		{hdr + "0,512.5,1\n", `line 2: prompt_len "512.5" is not an integer`},
		{hdr + "0,0,1\n", `line 2: prompt_len 0 is out of range 1..10000000`},
		{hdr + "0,10000001,1\n", `prompt_len 10000001 is out of range`},
		{hdr + "0,1,-3\n", `output_len -3 is out of range`},
		{hdr + "NaN,1,1\n", `line 2: arrival "NaN" must be seconds in [0,`},
		{hdr + "-0.5,1,1\n", `arrival "-0.5" must be seconds`},
		{hdr + "+Inf,1,1\n", `arrival "+Inf" must be seconds`},
		{hdr + "1e300,1,1\n", `arrival "1e300" must be seconds`},
		{hdr + "0,,1\n", `line 2: prompt_len is missing`},
		{hdr + "0,1\n", `line 2: 2 fields, but the header has 3`},
		{hdr + "0,1,\"2\n", `line 2: extraneous or missing " in quoted-field`},
		{hdr + "yesterday,1,1\n", `arrival "yesterday" is neither seconds nor a date-time`},
		{hdr + "0,1,1\n2024-01-01 00:00:00,1,1\n", `line 3: arrival "2024-01-01 00:00:00" mixes numbers and date-times`},
		{"arrival,prompt\n0,1\n", `line 1: no output column (have "arrival", "prompt"; want one of output, output_len`},
		{"time,arrival,prompt,output\n", `line 1: column "time" and "arrival" both give the arrival`},
		{"0,1,1\n1,2,2\n", `line 1: no header`},
		{hdr, `trace.csv: no requests`},
		{"", `trace.csv: empty trace`},
		{" \r\n\n", `trace.csv: empty trace`},
		{"# only a comment\n", `no header and no requests`},
		{`[{"arrival":0,"prompt":1,"output":1}]`, `a JSON array`},
		{"{\"arrival\":0,\"prompt\":1,\"output\":1}\n{\"arrival\":0,\"prompt\":1}\n", `line 2: output is missing`},
		{"{\"arrival\":0,\"prompt\":1,\"output\":1}\n\n{\"arrival\":0,\"prompt\":1,\"output\":true}\n", `line 3: output is "true", not a number`},
		{"{\"arrival\":0,\"prompt\":1,\"output\":null}\n", `line 1: output is missing`},
		{"{\"arrival\":\"\",\"prompt\":1,\"output\":1}\n", `line 1: arrival is an empty string`},
		{"{\"arrival\":0,\"prompt\":1,\"output\":1}\n{\"arrival\":0,\n", `line 2: not a JSON object`},
		{"{\"t\":0,\"prompt\":1,\"output\":1}\n", `line 1: no arrival key (have "output", "prompt", "t"; want one of arrival, arrival_time`},
		{"{\"arrival_ms\":1e12,\"prompt\":1,\"output\":1}\n", `arrival_ms "1e12" must be seconds`},
		{"timestamp,prompt,output\n2020-01-01T00:00:00Z,1,1\n2021-06-01T00:00:00Z,1,1\n", `trace.csv: timestamp spans more than a year`},
		{"id,arrival,prompt,output\n1e10,0,1,1\n", `id 1e10 is out of range`},
	} {
		_, err := ReadTrace("trace.csv", []byte(tc.in), 0, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

func TestReadTraceBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("arrival,prompt,output\n")
	for range sim.MaxRequests + 1 {
		b.WriteString("0,1,1\n")
	}
	if _, err := ReadTrace("big.csv", []byte(b.String()), 0, nil); err == nil || !strings.Contains(err.Error(), "more than 1000000 requests") {
		t.Fatalf("too many requests: %v", err)
	}
	long := "{\"arrival\":0,\"prompt\":1,\"output\":1,\"pad\":\"" + strings.Repeat("x", maxTraceLine) + "\"}\n"
	if _, err := ReadTrace("long.jsonl", []byte(long), 0, nil); err == nil || !strings.Contains(err.Error(), "long.jsonl line 1: longer than") {
		t.Fatalf("too long a line: %v", err)
	}
}

// A replayed trace runs like any workload.
func TestTraceReplayRuns(t *testing.T) {
	reqs := readTraceFile(t, filepath.Join("..", "testdata", "traces", "lab_burst.csv"))
	o, err := sim.Run(sim.Config{Step: stepModel(t), Policy: sim.PrefillFirst{MaxTokens: sim.DefaultMaxPrefillTokens}, RecordTokens: true}, reqs)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.Summarize(o.Results)
	if s.Completed != len(reqs) {
		t.Fatalf("%v", s.Counts)
	}
	// The 16000-token prefill stalls the short requests' decodes: the worst
	// gap is the whole prefill step, far above a decode step.
	stall := stepModel(t)
	if pre := stall.Prefill(16000).Seconds; s.ITLMax < pre {
		t.Fatalf("worst gap %g s, want at least the long prefill's %g s", s.ITLMax, pre)
	}
	t.Logf("lab_burst.csv, prefill-first: worst gap %.1f ms, P50 ITL %.2f ms", s.ITLMax*1e3, s.ITLP50*1e3)
}

// FuzzReadTrace: no input panics, an error names the file, and every
// accepted trace holds valid requests in arrival order. Seeds: the example
// traces and testdata/fuzz/FuzzReadTrace.
func FuzzReadTrace(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "traces", "*"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := ReadTrace("fuzz.trace", data, 0, nil)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.trace") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := validTrace(reqs); err != nil {
			t.Fatal(err)
		}
	})
}
