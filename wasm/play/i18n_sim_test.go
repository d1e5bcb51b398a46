package play

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"servelab/hwspecs"
	"servelab/sim"
	"servelab/sim/calibrate"
	"servelab/sim/results"
)

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// checkSaid fails when a simulator's note lacks a catalogue entry in
// either language, when the English catalogue does not say what sim says,
// or when the Chinese is not Chinese.
func checkSaid(t *testing.T, what string, n sim.Note) {
	t.Helper()
	for _, lang := range Langs() {
		if _, ok := catalogues[lang]["sim."+n.Key]; !ok {
			t.Errorf("%s: key sim.%s is missing in the %s catalogue (%q)", what, n.Key, lang, n.Text)
		}
	}
	if got := Say("en", n); got != n.Text {
		t.Errorf("%s: the English catalogue says %q, sim says %q", what, got, n.Text)
	}
	if zh := Say("zh", n); !hasHan(zh) {
		t.Errorf("%s: the Chinese of %s is %q", what, n.Key, zh)
	}
	for _, a := range n.Args {
		if m, ok := a.(sim.Note); ok {
			checkSaid(t, what+" (inside)", m)
		}
	}
}

// readSample is a sample benchmark file's runs, each with its companion
// summary merged where one lies beside it (as the CLI reads them), and the
// runs of the file alone.
func readSample(t *testing.T, name string) []*results.Run {
	t.Helper()
	path := filepath.Join("..", "..", "sim", "testdata", "bench", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := results.Read(path, data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	merged, _ := results.Read(path, data)
	for _, r := range merged {
		if c := r.Companion(path); c != "" {
			cd, err := os.ReadFile(c)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := results.Read(c, cd)
			if err != nil {
				t.Fatal(err)
			}
			r.Merge(cs[0])
		}
	}
	return append(alone, merged...)
}

// Every note and "cannot give" line of the benchmark readers, and every
// figure name and reason of a calibration, is in both catalogues and the
// page's English is sim's: both for what the sample files make the readers
// say and for every key written in sim's sources.
func TestSimTextsAreInTheCatalogues(t *testing.T) {
	for _, f := range []string{"vllm.json", "sglang.jsonl", "guidellm.json", "guidellm_v02.json",
		"aiperf/profile_export.jsonl", "aiperf/profile_export_raw.jsonl", "aiperf/profile_export_aiperf.json",
		"genai-perf/profile_export.json", "genai-perf/profile_export_genai_perf.json",
		"llmperf/m_550_150_individual_responses.json", "llmperf/m_550_150_summary.json"} {
		for _, b := range readSample(t, f) {
			if len(b.NoteNotes) != len(b.Notes) || len(b.CannotNotes) != len(b.Cannot) {
				t.Errorf("%s: %d notes with %d keys, %d cannot lines with %d keys", f, len(b.Notes), len(b.NoteNotes), len(b.Cannot), len(b.CannotNotes))
			}
			for _, n := range append(append([]sim.Note(nil), b.NoteNotes...), b.CannotNotes...) {
				checkSaid(t, f, n)
			}
		}
	}

	// A vLLM file's calibration (analytic, fast): its figure names, and the
	// reasons for the constants it cannot pin.
	data, err := os.ReadFile(filepath.Join("..", "..", "sim", "testdata", "bench", "vllm.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := results.ReadVLLM(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := calibrate.BenchEvidence(v, "vllm.json")
	if err != nil {
		t.Fatal(err)
	}
	step, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	cal, err := calibrate.Fit(step, nil, []calibrate.Evidence{ev})
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, tg := range cal.Targets {
		checkSaid(t, "calibration figure", tg.Key)
	}
	for _, c := range cal.Constants {
		if !c.Identified {
			kept++
			checkSaid(t, "calibration reason", c.Why)
			checkSaid(t, "calibration kept", sim.Note{Key: "cal.kept", Args: []any{c.Why}, Text: c.Note})
		}
	}
	if len(cal.Targets) != 2 || kept == 0 {
		t.Errorf("the vLLM calibration has %d figures and %d constants kept: %+v", len(cal.Targets), kept, cal)
	}

	// Every key sim's sources give a note, found in the sources themselves,
	// so a note no sample triggers is covered too.
	keyed := regexp.MustCompile(`\b(?:say|Say|b\.note|b\.cannot|refuse|Refuse|errorf)\("([a-z0-9.]+)"`)
	files, err := filepath.Glob(filepath.Join("..", "..", "sim", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := filepath.Glob(filepath.Join("..", "..", "sim", "*", "*.go")) // sim's packages: results, lab, calibrate, lecture
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, sub...)
	internal, err := filepath.Glob(filepath.Join("..", "..", "sim", "internal", "*", "*.go")) // the readers' shared refusals
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, internal...)
	files = append(files, "measured.go") // the page's own keyed errors
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range keyed.FindAllStringSubmatch(string(src), -1) {
			found++
			// A template of verbs and marks alone ("%s: %v") needs no Chinese in it.
			words := regexp.MustCompile(`[A-Za-z]{2,}`).MatchString(fmtVerb.ReplaceAllString(catalogueEN["sim."+m[1]], ""))
			for _, lang := range Langs() {
				if s, ok := catalogues[lang]["sim."+m[1]]; !ok || (lang == "zh" && words && !hasHan(s)) {
					t.Errorf("%s gives key %q: the %s catalogue lacks it", filepath.Base(f), m[1], lang)
				}
			}
		}
	}
	if found < 50 {
		t.Errorf("found only %d keyed notes in sim's sources: the scan is broken", found)
	}
}

// A file the readers refuse is refused in the page's language, the
// reader's reason inside the page's own sentence; the English is as before.
func TestRefusalsAreSaidInTheLanguage(t *testing.T) {
	for _, c := range []struct{ name, data, en string }{
		{"a.json", `{"foo": 1}`, "a.json is neither a lab JSON (needs \"summary\" and \"gaps\") nor a benchmark tool's result: not a known benchmark file (it has keys: foo; formats tried: " + results.Tried() + "); vLLM and SGLang write per-request arrays only with --save-detailed or --output-details"},
		{"b.json", `{"itls": [[0.1], [0.1]], "ttfts": [0.1]}`, "b.json is neither a lab JSON (needs \"summary\" and \"gaps\") nor a benchmark tool's result: ttfts: 1 entries but itls has 2"},
		{"c.json", `{"summary": {"error": "connection refused"}, "gaps": []}`, "c.json: the run recorded no tokens (connection refused)"},
	} {
		_, err := ParseMeasured(c.name, []byte(c.data))
		if err == nil {
			t.Fatalf("%s was read", c.name)
		}
		if err.Error() != c.en || SayError("en", err) != c.en {
			t.Errorf("%s: the English is %q (said %q), want %q", c.name, err.Error(), SayError("en", err), c.en)
		}
		zh := SayError("zh", err)
		if !hasHan(zh) || !strings.Contains(zh, c.name) || strings.Contains(zh, "neither") || strings.Contains(zh, "known benchmark") || strings.Contains(zh, "entries but") {
			t.Errorf("%s: the Chinese is %q", c.name, zh)
		}
	}
}

// The built-in profiles' texts (every constant's source on every GPU, the
// GPUs' notes), the constants' meanings and a calibration's own texts
// reach the Chinese page in Chinese, and the English page as sim wrote them.
func TestProfileTextsAreInTheCatalogues(t *testing.T) {
	for _, name := range sim.ProfileNames() {
		p, err := sim.BuiltinProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, gpu := range hwspecs.Names() {
			var texts []string
			for _, c := range p.Resolve(gpu) {
				texts = append(texts, c.Source)
			}
			_, note := p.GPUNote(gpu)
			texts = append(texts, note)
			for _, s := range texts {
				if got := ProfileText("en", s); got != s {
					t.Errorf("%s on %s: the English page shows %q for %q", name, gpu, got, s)
				}
				if zh := ProfileText("zh", s); zh == s || !hasHan(zh) {
					t.Errorf("%s on %s: no Chinese for %q (add it to the catalogues)", name, gpu, s)
				} else if strings.Contains(zh, " and ") || strings.Contains(zh, "all GPUs") {
					t.Errorf("%s on %s: %q came out half English: %q (a template too loose for it)", name, gpu, s, zh)
				}
			}
		}
	}
	for _, c := range sim.ConstantInfos() {
		if ConstMeaning("en", c) != c.Meaning || !hasHan(ConstMeaning("zh", c)) {
			t.Errorf("constant %s: no Chinese meaning, or the English is not sim's %q", c.Name, c.Meaning)
		}
	}
	for _, n := range []sim.Note{calibrate.SourceNote("my lab (1).json", 0.074), calibrate.GPUNote("run.json", []string{"eff_mem", "overhead"}, "vllm")} {
		checkSaid(t, "calibrated profile", n)
		zh := ProfileText("zh", n.Text)
		if zh != Say("zh", n) {
			t.Errorf("a calibrated profile's text %q reads %q, want %q", n.Text, zh, Say("zh", n))
		}
	}
	// A text the catalogues do not know (a user's own profile) stays as written.
	if s := "measured on our cluster, 2026-11"; ProfileText("zh", s) != s {
		t.Errorf("a user's source was changed: %q", ProfileText("zh", s))
	}
}
