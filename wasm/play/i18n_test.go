package play

import (
	"os"
	"regexp"
	"servelab/sim/scenario"
	"strings"
	"testing"
	"unicode"
)

// TestCataloguesHaveSameKeys fails when a text is missing in either language.
func TestCataloguesHaveSameKeys(t *testing.T) {
	for _, pair := range [][2]string{{"en", "zh"}, {"zh", "en"}} {
		for k := range catalogues[pair[0]] {
			if v, ok := catalogues[pair[1]][k]; !ok || v == "" {
				t.Errorf("key %q is in the %s catalogue but not in %s", k, pair[0], pair[1])
			}
		}
	}
}

// verbRe matches a fmt verb: a translation keeps as many as the English.
var verbRe = regexp.MustCompile(`%(\[\d+\])?[-+#0]*[0-9]*(\.[0-9]+)?[vdsgfqx%]`)

func TestTranslationsKeepTheirPlaceholders(t *testing.T) {
	braces := regexp.MustCompile(`\{[a-z0-9]+\}`)
	for k, en := range catalogueEN {
		zh := catalogueZH[k]
		if a, b := len(verbRe.FindAllString(en, -1)), len(verbRe.FindAllString(zh, -1)); a != b {
			t.Errorf("%s: %d fmt verbs in English, %d in Chinese", k, a, b)
		}
		for _, p := range braces.FindAllString(en, -1) {
			if !strings.Contains(zh, p) {
				t.Errorf("%s: the Chinese text lacks %s", k, p)
			}
		}
	}
}

// TestEveryKeyTheAppUsesExists reads the app's sources and the page for
// catalogue keys (literal tr/trf/T/Tf calls, data-i18n* and data-term
// attributes, chapter and glossary keys) and checks both catalogues have them.
func TestEveryKeyTheAppUsesExists(t *testing.T) {
	need := map[string]bool{}
	call := regexp.MustCompile(`\b(?:tr|trf|T|Tf)\((?:[a-z.]+, )?"([a-zA-Z0-9_./-]+)"`)
	for _, dir := range []string{"..", "."} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") || strings.HasPrefix(e.Name(), "catalogue_") {
				continue
			}
			b, err := os.ReadFile(dir + "/" + e.Name())
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range call.FindAllStringSubmatch(string(b), -1) {
				if !strings.HasSuffix(m[1], ".") {
					need[m[1]] = true
				}
			}
		}
	}
	page, err := os.ReadFile("../../site/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`data-i18n[a-z-]*="([^"]+)"`).FindAllStringSubmatch(string(page), -1) {
		need[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`data-term="([^"]+)"`).FindAllStringSubmatch(string(page), -1) {
		need["term."+m[1]], need["def."+m[1]] = true, true
	}
	for _, k := range GlossaryTerms {
		need["gloss."+k], need["def."+k] = true, true
	}
	for _, c := range Chapters {
		for _, s := range []string{"short", "title", "question", "fixed", "moves", "narrative", "predict", "reveal"} {
			need["ch."+c.ID+"."+s] = true
		}
		for i := 1; i <= c.Options; i++ {
			need["ch."+c.ID+".o"+string(rune('0'+i))] = true
		}
		for _, m := range c.Moves {
			need["param."+m] = true
		}
	}
	for _, p := range Presets {
		need["preset."+p.Name+".title"], need["preset."+p.Name+".about"] = true, true
	}
	for _, c := range Controls() {
		if c.Unit != "" {
			need["unit."+c.Unit] = true
		}
		need[c.Label()] = true // every knob's label: a link's note names it
	}
	for _, w := range scenario.Workloads {
		need["workload."+w] = true
	}
	for _, p := range scenario.Policies {
		need["policy."+p] = true
	}
	if len(need) < 100 {
		t.Fatalf("found only %d keys: the scan is broken", len(need))
	}
	for k := range need {
		for _, lang := range Langs() {
			if _, ok := catalogues[lang][k]; !ok {
				t.Errorf("the app uses key %q, missing in the %s catalogue", k, lang)
			}
		}
	}
}

// TestChineseIsChinese: every Chinese text a control or chapter shows has
// Chinese in it (or is a term the lecture keeps in English, like TTFT).
func TestChineseIsChinese(t *testing.T) {
	han := func(s string) bool {
		for _, r := range s {
			if unicode.Is(unicode.Han, r) {
				return true
			}
		}
		return false
	}
	for k, v := range catalogueZH {
		if (strings.HasPrefix(k, "ctl.") || strings.HasPrefix(k, "ch.") || strings.HasPrefix(k, "param.") || strings.HasPrefix(k, "def.")) && !han(v) && v != catalogueEN[k] {
			t.Errorf("%s = %q has no Chinese", k, v)
		}
	}
}

func TestPickLang(t *testing.T) {
	for _, c := range []struct{ q, nav, want string }{
		{"?lang=zh", "en-US", "zh"}, {"?lang=en", "zh-CN", "en"}, {"", "zh-TW", "zh"}, {"", "fr", "en"}, {"?lang=xx", "zh", "zh"},
	} {
		if got := PickLang(c.q, c.nav); got != c.want {
			t.Errorf("PickLang(%q, %q) = %q, want %q", c.q, c.nav, got, c.want)
		}
	}
}

// TestEnglishIsEnglish: no English text carries Chinese (a Han character
// or full-width punctuation), so an English page shows none.
func TestEnglishIsEnglish(t *testing.T) {
	for k, v := range catalogueEN {
		for _, r := range v {
			if unicode.Is(unicode.Han, r) || r >= 0x3000 && r <= 0x303F || r >= 0xFF00 && r <= 0xFFEF {
				t.Errorf("%s = %q carries %q", k, v, r)
				break
			}
		}
	}
}

// TestChineseWording: the wording the defects list named (issue 26) stays
// fixed: no English gloss after an error, no spaces between Chinese words
// in the step box, ms headers written as the other tables write them, and a
// slowdown said as a multiple of the time alone.
func TestChineseWording(t *testing.T) {
	hanSpace := regexp.MustCompile(`\p{Han} \p{Han}`)
	for _, kind := range []string{"decode", "prefill", "mixed"} {
		if s := Tf("zh", "step.carry", "1.2 s", T("zh", "step.kind."+kind), 32, 512, "#1"); hanSpace.MatchString(s) {
			t.Errorf("the step box's %s step reads %q", kind, s)
		}
	}
	for k, v := range catalogueZH {
		for _, bad := range []string{"could not start", "差不过", "(ms)", "只慢了"} {
			if strings.Contains(v, bad) {
				t.Errorf("%s = %q carries %q", k, v, bad)
			}
		}
	}
	if got := T("zh", "t4.ms"); got != "（毫秒）" {
		t.Errorf("demo 4's ms header in Chinese is %q", got)
	}
	if !strings.Contains(T("zh", "ch.demo1.narrative"), "原来的 {lastpre} 倍") {
		t.Errorf("demo 1's prefill slowdown is not said as a multiple: %q", T("zh", "ch.demo1.narrative"))
	}
	for _, lang := range Langs() {
		if n := T(lang, "ch.demo1.narrative"); !strings.Contains(n, "14.9") || !strings.Contains(n, "14.89") {
			t.Errorf("the %s demo 1 narrative does not say the lecture's 14.9 is the table's 14.89 rounded", lang)
		}
	}
}
