package main

import (
	"strings"
	"testing"
)

// Objectives no rate meets give goodput 0 and say so, instead of a search
// under a ceiling of 0 ("search ceiling must be in (0, 1e+07] req/s, got 0").
func TestNoRateMeetsTheObjectives(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "interference", "--ttft-slo", "0.001", "--requests", "300"}, "No rate meets these objectives"},
		{[]string{"goodput", "--ttft-slo", "0.001", "--requests", "200"}, "no rate meets the objectives"},
		{[]string{"goodput", "--policy", "disaggregated", "--ttft-slo", "0.001", "--requests", "200"}, "no rate meets the objectives"},
	} {
		code, out, errs := cli(t, c.args...)
		if code != 0 || !strings.Contains(out, c.want) || strings.Contains(out+errs, "ceiling") {
			t.Errorf("%v: exit %d, %s%s; want %q", c.args, code, out, errs, c.want)
		}
	}
	if code, _, errs := cli(t, "goodput", "--policy", "disaggregated", "--search-gpus", "4", "--ttft-slo", "0.001", "--requests", "200"); code == 0 || !strings.Contains(errs, "no rate meets it") {
		t.Errorf("--search-gpus: exit %d, %s", code, errs)
	}
}
