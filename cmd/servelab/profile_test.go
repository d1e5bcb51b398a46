package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

type stepOut struct {
	Seconds   float64 `json:"seconds"`
	CPUTime   float64 `json:"cpu_time"`
	Profile   string  `json:"profile"`
	GPUNote   string  `json:"gpu_note"`
	Constants []struct {
		Name   string  `json:"name"`
		Value  float64 `json:"value"`
		Source string  `json:"source"`
	} `json:"constants"`
}

func stepJSON(t *testing.T, args ...string) stepOut {
	t.Helper()
	code, out, errs := cli(t, append([]string{"step", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("step %v: exit %d: %s", args, code, errs)
	}
	var s stepOut
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func constant(s stepOut, name string) (float64, string) {
	for _, c := range s.Constants {
		if c.Name == name {
			return c.Value, c.Source
		}
	}
	return math.NaN(), ""
}

// --profile on step: every constant with its source; typed flags override
// the profile and say so; --overhead 0 takes the CPU side away.
func TestStepProfileConstantsAndOverrides(t *testing.T) {
	lec := stepJSON(t, "--batch", "32", "--context", "700")
	if lec.Profile != "lecture" || math.Abs(lec.Seconds-7.67e-3) > 0.01e-3 || len(lec.Constants) != 4 {
		t.Errorf("default profile: %+v", lec)
	}
	v := stepJSON(t, "--profile", "vllm", "--batch", "32", "--context", "700", "--gpu", "A100-80GB")
	if v.Profile != "vllm" || len(v.Constants) != 10 || !strings.Contains(v.GPUNote, "fitted to 22 published points") {
		t.Errorf("vllm on A100: %+v", v)
	}
	for _, c := range v.Constants {
		if c.Source == "" {
			t.Errorf("%s has no source", c.Name)
		}
	}
	if e, src := constant(v, "eff_compute"); e != 0.6882 || !strings.Contains(src, "fidelity --fit") {
		t.Errorf("A100 eff_compute %g from %q", e, src)
	}
	b := stepJSON(t, "--profile", "vllm", "--gpu", "B200")
	if !strings.Contains(b.GPUNote, "no published points") {
		t.Errorf("B200 note %q", b.GPUNote)
	}
	o := stepJSON(t, "--profile", "vllm", "--eff-mem", "0.5", "--batch", "32", "--context", "700", "--gpu", "A100-80GB")
	if e, src := constant(o, "eff_mem"); e != 0.5 || src != "--eff-mem" || o.Seconds <= v.Seconds {
		t.Errorf("typed --eff-mem: %g from %q, step %.3f ms vs %.3f", e, src, o.Seconds*1e3, v.Seconds*1e3)
	}
	z := stepJSON(t, "--profile", "vllm", "--overhead", "0", "--batch", "32", "--context", "700")
	if seq, _ := constant(z, "seq_cost"); z.CPUTime != 0 || seq != 0 {
		t.Errorf("--overhead 0 leaves CPU time %g, seq_cost %g", z.CPUTime, seq)
	}
}

// --profile reaches sim, goodput, demo and labserver too.
func TestProfileFlagOnEveryCommand(t *testing.T) {
	get := func(args ...string) string {
		t.Helper()
		code, out, errs := cli(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return out
	}
	simArgs := []string{"sim", "--policy", "chunked", "--rate", "10", "--requests", "100", "--json"}
	if a, b := get(simArgs...), get(append(simArgs, "--profile", "vllm")...); a == b {
		t.Error("sim --profile vllm gives the lecture's result")
	}
	if a, b := get("demo", "interference", "--json"), get("demo", "interference", "--json", "--profile", "lecture"); a != b {
		t.Error("demo's default is not the lecture profile")
	}
	get("goodput", "--profile", "vllm", "--requests", "200", "--json")
	code, _, errs := cli(t, "labserver", "--profile", "nope", "--port", "0")
	if code == 0 || !strings.Contains(errs, "unknown profile") {
		t.Errorf("labserver --profile nope: exit %d, %s", code, errs)
	}
}
