package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// A file no row of the table detects is refused with what was seen (its
// keys, or its first bytes) and the formats that were tried, by their
// names in the table; never read by some other format's reader.
func TestAnUnknownFileSaysWhatWasSeen(t *testing.T) {
	for _, f := range Formats {
		if !strings.Contains(", "+Tried()+", ", ", "+f.Name+", ") {
			t.Errorf("Tried() = %q leaves out %s", Tried(), f.Name)
		}
	}
	for _, c := range []struct{ data, want, not string }{
		{`null`, `(it starts "null";`, "empty JSON list"},
		{`42`, `(it starts "42";`, ""},
		{`"a string"`, `(it starts "\"a string\"";`, ""},
		{`not json at all`, `(it starts "not json at all";`, ""},
		{`[1, 2]`, `(it starts "[1, 2]";`, ""},
		{`{}`, "it has keys: none;", ""},
		{`{"foo": 1, "bar": [1]}`, "it has keys: bar, foo;", ""},
		{"{\"a\": 1}\n{\"a\": 2}\n", "first line has keys a (", ""},
		{`[{"x": 1}]`, "first entry has keys x (", ""},
		{`[{}]`, "first entry has keys none (", ""},
	} {
		_, err := Read("f.json", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.not != "" && strings.Contains(err.Error(), c.not)) {
			t.Errorf("Read(%s): %v, want an error with %q", c.data, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "formats tried: "+Tried()) {
			t.Errorf("Read(%s): %v does not name the formats tried (%s)", c.data, err, Tried())
		}
		res, serr := ReadSliced("f.json", []byte(c.data), nil)
		if serr == nil || err == nil || serr.Error() != err.Error() || res.Known {
			t.Errorf("ReadSliced(%s): %v (known %v), want Read's %v", c.data, serr, res.Known, err)
		}
	}
}

// Each row is read one way (whole, by lines or by entries) or refused,
// and names a tool; names are unique.
func TestFormatRowsAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Formats {
		ways := 0
		for _, set := range []bool{f.read != nil, f.lines != nil, f.list != nil, f.refuse != nil} {
			if set {
				ways++
			}
		}
		if ways != 1 || f.Name == "" || f.Tool == "" || f.Detect == nil || seen[f.Name] {
			t.Errorf("row %q: %d ways to read it, tool %q, detect %v, seen %v", f.Name, ways, f.Tool, f.Detect != nil, seen[f.Name])
		}
		seen[f.Name] = true
	}
}

// A new format is one row: a file it detects is read by its reader, whole
// and in slices, and no other row's reader stands in for a row that has
// none (once, any object the sliced reader did not place was read as an
// llmperf summary).
func TestANewRowReadsItsFiles(t *testing.T) {
	saved := Formats
	defer func() { Formats = saved }()
	Formats = append([]Format{{Name: "test", Tool: "test-tool", Detect: objectWith("zz_test"),
		read: func(name string, data []byte) ([]*Run, error) {
			return []*Run{{Tool: "test-tool", Format: "test file"}}, nil
		}},
		{Name: "unread", Tool: "other", Detect: objectWith("zz_unread")},
	}, saved...)
	doc := []byte(`{"zz_test": 1, "results_ttft_s_mean": 0.1}`)
	runs, err := Read("t.json", doc)
	if err != nil || len(runs) != 1 || runs[0].Tool != "test-tool" {
		t.Fatalf("Read: %v %v", runs, err)
	}
	res, err := ReadSliced("t.json", doc, nil)
	if err != nil || len(res.Runs) != 1 || res.Runs[0].Tool != "test-tool" || res.Format.Name != "test" {
		t.Fatalf("ReadSliced: %+v %v", res, err)
	}
	for _, read := range []func([]byte) error{
		func(d []byte) error { _, err := Read("u.json", d); return err },
		func(d []byte) error { _, err := ReadSliced("u.json", d, nil); return err },
	} {
		if err := read([]byte(`{"zz_unread": 1, "results_ttft_s_mean": 0.1}`)); err == nil || !strings.Contains(err.Error(), "a unread file, which servelab does not read") {
			t.Errorf("a row with no reader: %v", err)
		}
	}
}

// Detect names a lab file's row (the front ends hand it to sim/lab) and a
// tool's file's.
func TestDetectNamesTheRow(t *testing.T) {
	for _, c := range []struct{ data, name string }{
		{`{"summary": {}, "gaps": []}`, "lab"},
		{`{"itls": [[0.1]]}`, "vllm"},
		{`{"itls": [[0.1]], "server_info": {}}`, "sglang"},
		{"{\"itls\": [[0.1]]}\n{\"itls\": [[0.2]]}\n", "sglang"},
		{`[{"ttft_s": 0.1}]`, "llmperf"},
		{`{"benchmarks": []}`, "guidellm"},
	} {
		f, _ := Detect([]byte(c.data))
		if f == nil || f.Name != c.name {
			t.Errorf("Detect(%s) = %+v, want %s", c.data, f, c.name)
		}
	}
	var keys map[string]json.RawMessage
	if f, _, _ := find(Object, keys); f != nil {
		t.Errorf("no keys detected as %s", f.Name)
	}
}
