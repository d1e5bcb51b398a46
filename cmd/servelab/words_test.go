package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// run.py's lengths are words: --tokens-per-word turns a --like file's and a
// calibrated file's prompt lengths into tokens, as labserver counts them.
func TestTokensPerWord(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.json")
	lab := []string{"--short-concurrency", "4", "--short-output-len", "64", "--long-output-len", "16", "--duration", "6", "--inject-after", "2"}
	if code, _, errs := cli(t, append([]string{"sim", "--workload", "lab", "--short-input-len", "100", "--long-input-len", "1000", "--save", file, "--json"}, lab...)...); code != 0 {
		t.Fatalf("saving a run: %s", errs)
	}
	// The file's 100 and 1000 words at 3 tokens each are the run of 300 and 3000 tokens.
	code, like, errs := cli(t, "sim", "--like", file, "--tokens-per-word", "3", "--json")
	if code != 0 {
		t.Fatalf("--like --tokens-per-word 3: %s", errs)
	}
	_, want, _ := cli(t, append([]string{"sim", "--workload", "lab", "--short-input-len", "300", "--long-input-len", "3000", "--json"}, lab...)...)
	if like != want {
		t.Errorf("--like at 3 tokens a word:\n%s\nwant the 300/3000-token run:\n%s", like, want)
	}
	if _, one, _ := cli(t, "sim", "--like", file, "--json"); one == like {
		t.Error("the default factor read the words as 3 tokens each")
	}
	// calibrate predicts the long prompt's TTFT from its tokens.
	ttft := func(perWord string) float64 {
		code, out, errs := cli(t, "calibrate", file, "--json", "--tokens-per-word", perWord)
		if code != 0 {
			t.Fatalf("calibrate --tokens-per-word %s: %s", perWord, errs)
		}
		var res struct {
			Targets []struct {
				Name string
				Base float64
			}
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		for _, tg := range res.Targets {
			if tg.Name == "long TTFT" {
				return tg.Base
			}
		}
		t.Fatalf("no long TTFT in %s", out)
		return 0
	}
	if one, four := ttft("1"), ttft("4"); !(four > 3*one) {
		t.Errorf("the base model's long TTFT is %.1f ms at 1 token a word, %.1f ms at 4", 1e3*one, 1e3*four)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--like", file, "--tokens-per-word", "0"}, "tokens per word must be in (0, 1000]"},
		{[]string{"calibrate", file, "--tokens-per-word", "-1"}, "tokens per word must be in (0, 1000]"},
		{[]string{"sim", "--workload", "lab", "--tokens-per-word", "3"}, "without one, --short-input-len and --long-input-len are tokens already"},
	} {
		if code, _, errs := cli(t, c.args...); code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errs, c.want)
		}
	}
}
