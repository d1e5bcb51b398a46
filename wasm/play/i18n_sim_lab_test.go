package play

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"servelab/sim"
	"servelab/sim/lab"
)

// labFileWith is a lab JSON that reads, with old replaced by new.
func labFileWith(t *testing.T, old, new string) string {
	t.Helper()
	s := lab.Summary{Label: "run", BaseURL: "http://localhost:8000", ShortConcurrency: 2, LongInputLen: 4000,
		TokensObserved: 3, ITLP50: 0.01, ITLP90: 0.02, ITLP99: 0.3, ITLMax: 0.3, WorstGap: 0.3, Wall: 1}
	var b bytes.Buffer
	if err := lab.Write(&b, &lab.Measured{Config: lab.DefaultConfig(), Summary: s,
		Gaps: []sim.Gap{{TRelInject: -0.1, Gap: 0.01}, {TRelInject: 0.2, Gap: 0.3}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), old) {
		t.Fatalf("%q is not in the lab file", old)
	}
	return strings.Replace(b.String(), old, new, 1)
}

// labWith is a lab JSON that reads, with its key's value replaced by raw.
func labWith(t *testing.T, key, raw string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(labFileWith(t, "{", "{")), &m); err != nil {
		t.Fatal(err)
	}
	m[key] = json.RawMessage(raw)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// proseWord is an English word of prose in a Chinese message: a run of
// letters that is not a name (a path's key, a JSON or Go name).
var proseWord = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.\[\]"])([A-Za-z]{3,})(?:$|[^A-Za-z0-9_.\[\]"(])`)

// A lab JSON, a vLLM result or a GenAI-Perf export the readers refuse is
// refused in Chinese on the Chinese page: every keyed part of the error
// (the reader's own refusal, the field path's fixed words, the kinds a
// type error names) has a Chinese entry, the English is sim's word for
// word, and no English prose is left. A refusal the readers give without
// a key, or a key with no Chinese, fails here.
func TestLabRefusalsAreSaidInChinese(t *testing.T) {
	for _, c := range []struct{ name, data, en string }{
		{"nosum.json", labFileWith(t, `"summary": {`, `"summary": 3, "x": {`),
			"nosum.json: summary: want a JSON object"},
		{"missing.json", labFileWith(t, `"itl_p99": `, `"itl_p99x": `),
			"missing.json: summary.itl_p99: missing"},
		{"label.json", labFileWith(t, `"long_error": ""`, `"long_error": 5`),
			"label.json: summary.long_error: want a string, got 5"},
		{"itl.json", labFileWith(t, `"itl_p50": 0.01`, `"itl_p50": "fast"`),
			`itl.json: summary.itl_p50: want a number, got "fast"`},
		{"count.json", labFileWith(t, `"short_concurrency": 2`, `"short_concurrency": 2.5`),
			"count.json: summary.short_concurrency: want an integer, got 2.5"},
		{"negative.json", labFileWith(t, `"wall": 1`, `"wall": -1`),
			"negative.json: summary.wall: must not be negative, got -1"},
		{"gap.json", labFileWith(t, `"gap": 0.3`, `"gap": -0.3`),
			"gap.json: gaps[1].gap: must be a number of seconds in [0, 1e+06], got -0.3"},
		{"gaptype.json", labFileWith(t, `"gap": 0.3`, `"gap": "slow"`),
			"gaptype.json: gaps.gap: want float64, got string"},
		{"gapsobj.json", labWith(t, "gaps", `{"t_rel_inject": 0}`),
			"gapsobj.json: gaps: want []sim.Gap, got object"},
		{"sumlist.json", labWith(t, "summary", `[]`),
			"sumlist.json: summary: want a JSON object"},
		{"port.json", labFileWith(t, `"port": 8000`, `"port": "8000"`),
			"port.json: config.port: want int, got string"},
		{"vllm.json", `{"itls": [[0.1, -2]], "ttfts": [0.1]}`,
			"vllm.json is neither a lab JSON (needs \"summary\" and \"gaps\") nor a benchmark tool's result: request 0: gap 1 must be a number of seconds in [0, 1e+06], got -2"},
		{"genai.json", `{"experiments": [{"experiment": {"mode": "concurrency", "value": 1}, "requests": []}]}`,
			"genai.json is neither a lab JSON (needs \"summary\" and \"gaps\") nor a benchmark tool's result: experiments[0].requests: empty"},
		{"genaits.json", `{"experiments": [{"experiment": {"mode": "concurrency", "value": 1}, "requests": [{"response_timestamps": [1]}]}]}`,
			"genaits.json is neither a lab JSON (needs \"summary\" and \"gaps\") nor a benchmark tool's result: experiments[0].requests[0].timestamp: missing"},
	} {
		_, err := ParseMeasured(c.name, []byte(c.data))
		if err == nil {
			t.Errorf("%s was read", c.name)
			continue
		}
		if err.Error() != c.en || SayError("en", err) != c.en {
			t.Errorf("%s: the English is %q (said %q), want %q", c.name, err.Error(), SayError("en", err), c.en)
		}
		// Every keyed part, the reader's inner ones too, is in both catalogues.
		keyed := 0
		for e := error(err); e != nil; e = errors.Unwrap(e) {
			if ne, ok := e.(*sim.NoteError); ok {
				keyed++
				checkSaid(t, c.name, ne.Note)
			}
		}
		if keyed < 2 {
			t.Errorf("%s: only %d keyed parts in %q: the reader's refusal is not keyed", c.name, keyed, err)
		}
		zh := SayError("zh", err)
		if !hasHan(zh) || !strings.Contains(zh, c.name) {
			t.Errorf("%s: the Chinese is %q", c.name, zh)
		}
		for _, m := range proseWord.FindAllStringSubmatch(zh, -1) {
			switch m[1] {
			case "JSON", "Lines", "itls", "gaps", "summary": // names the Chinese keeps
				continue
			}
			t.Errorf("%s: English %q left in the Chinese %q", c.name, m[1], zh)
		}
	}
}

// A lab file laid over says what it is in the page's language.
func TestOverlayKindIsSaid(t *testing.T) {
	o, err := ParseMeasured("lab.json", []byte(labFileWith(t, `"label": "run"`, `"label": "run"`)))
	if err != nil {
		t.Fatal(err)
	}
	if o.KindIn("en") != "lab" || !hasHan(o.KindIn("zh")) {
		t.Errorf("a lab file's kind reads %q and %q", o.KindIn("en"), o.KindIn("zh"))
	}
	if (&Overlay{Kind: "vllm"}).KindIn("zh") != "vllm" {
		t.Errorf("a tool's kind is not its name")
	}
	for _, lang := range Langs() {
		if k := "fig.p90"; T(lang, k) == k || !hasHan(T("zh", k)) {
			t.Errorf("the log-scale axis title has no %s text", lang)
		}
	}
}
