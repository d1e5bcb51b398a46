package sim

import (
	"strings"
	"testing"
)

// A profile is one JSON object with one entry per GPU and texts that are
// text: what follows the object, a GPU named twice in different case (which
// applied depended on map order: 7.67 or 50.7 ms) and control characters
// (ANSI escapes, printed raw by servelab step) are refused.
func TestParseProfileRefusesAmbiguity(t *testing.T) {
	const ok = `{"name":"p","title":"t","physics":{},"constants":{"overhead":{"value":0.001,"source":"s"}}`
	if _, err := ParseProfile([]byte(ok + "}\n")); err != nil {
		t.Fatalf("a plain profile: %v", err)
	}
	for _, c := range []struct{ json, want string }{
		{ok + `} garbage`, "follows the profile"},
		{ok + `}}`, "follows the profile"},
		{ok + `} {"name":"q"}`, "follows the profile"},
		{ok + `,"gpus":{"H100-SXM":{"constants":{"overhead":{"value":0.001,"source":"a"}}},"h100-sxm":{"constants":{"overhead":{"value":0.05,"source":"b"}}}}}`, `"H100-SXM" and "h100-sxm" both name H100-SXM`},
		{`{"name":"p","title":"\u001b[31mred","physics":{},"constants":{}}`, `"title": holds the control character U+001B`},
		{ok + `,"gpus":{"H100-SXM":{"note":"\u009b2J","constants":{}}}}`, "control character U+009B"},
		{`{"name":"p","title":"t","physics":{},"constants":{"overhead":{"value":0.001,"source":"\u001b]8;;x\u0007"}}}`, "constants.overhead.source"},
	} {
		_, err := ParseProfile([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.json, err, c.want)
		}
	}
}
