package lab

import (
	"bytes"
	"strings"
	"testing"

	"servelab/sim/results"
)

// Inputs that once read as something they are not: a BOM refused, an empty
// error read as an all-zero summary, 1e308 gaps summing to +Inf.
func TestMeasuredReadersRefuseNonsenseAndTakeBOM(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, sampleMeasured()); err != nil {
		t.Fatal(err)
	}
	m, err := Read(strings.NewReader("\xef\xbb\xbf" + buf.String()))
	if err != nil || m.Summary.Label != "chunked" {
		t.Errorf("a measured JSON with a UTF-8 BOM: %v", err)
	}
	if _, err := results.ReadVLLM(strings.NewReader("\xef\xbb\xbf" + `{"itls": [[0.01]]}`)); err != nil {
		t.Errorf("a vLLM result with a UTF-8 BOM: %v", err)
	}
	for _, c := range []struct{ doc, want string }{
		{`{"summary":{"error":""}}`, "summary.label: missing"},
		{`{"summary":{"error":"","label":"x"}}`, "missing"},
		{`{"summary":` + summaryWith(t, `"wall": 1`, `"wall": 1`) + `,"gaps":[{"t_rel_inject":0,"gap":1e308}]}`, "gaps[0].gap"},
	} {
		if _, err := Read(strings.NewReader(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s: error %v, want %q", c.doc, err, c.want)
		}
	}
	for _, c := range []struct{ doc, want string }{
		{`{"itls":[[1e308,1e308]]}`, "itls[0][0]"},
		{`{"itls":[[0.1]],"ttfts":[1e300]}`, "ttfts[0]"},
		{`{"itls":[[0.1]],"duration":-1}`, "duration"},
	} {
		if _, err := results.ReadVLLM(strings.NewReader(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.doc, err, c.want)
		}
	}
}

// summaryWith is the sample file's summary object with one replacement.
func summaryWith(t *testing.T, old, new string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, sampleMeasured()); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	i, j := strings.Index(s, `"summary": `), strings.Index(s, `"gaps": `)
	body := strings.TrimSpace(s[i+len(`"summary": `) : j])
	return strings.Replace(strings.TrimSuffix(body, ","), old, new, 1)
}
