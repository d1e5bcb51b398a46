package play

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Language is one of the page's languages: its code (the URL's ?lang=),
// its own name (the language picker), its HTML lang tag, and its texts.
type Language struct {
	Code, Name, Tag string
	Texts           map[string]string
}

// Languages are the page's languages, each one catalogue file
// (catalogue_CODE.go: data, keyed by the same keys) and a line here;
// TestCataloguesHaveSameKeys fails when a key is missing in one.
var Languages = []Language{
	{"en", "English", "en", catalogueEN},
	{"zh", "中文", "zh-CN", catalogueZH},
}

// catalogues are the Languages' texts by code.
var catalogues = func() map[string]map[string]string {
	m := map[string]map[string]string{}
	for _, l := range Languages {
		m[l.Code] = l.Texts
	}
	return m
}()

// Langs are the page's language codes.
func Langs() []string {
	codes := make([]string, len(Languages))
	for i, l := range Languages {
		codes[i] = l.Code
	}
	return codes
}

// LangTag is lang's HTML lang attribute ("zh-CN"); lang itself when unknown.
func LangTag(lang string) string {
	for _, l := range Languages {
		if l.Code == lang {
			return l.Tag
		}
	}
	return lang
}

// HasLang reports whether lang has a catalogue.
func HasLang(lang string) bool { _, ok := catalogues[lang]; return ok }

// T is the text for key in lang; English when lang lacks it, and the key
// itself (a message computed elsewhere passes through) when both do.
func T(lang, key string) string {
	if s, ok := catalogues[lang][key]; ok {
		return s
	}
	if s, ok := catalogueEN[key]; ok {
		return s
	}
	return key
}

// Tf formats the text for key with args (fmt verbs; a catalogue may
// reorder them with %[n]).
func Tf(lang, key string, args ...any) string { return fmt.Sprintf(T(lang, key), args...) }

// Fill replaces {name} in the text for key with vals[name].
func Fill(lang, key string, vals map[string]string) string {
	s := T(lang, key)
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		s = strings.ReplaceAll(s, "{"+k+"}", vals[k])
	}
	return s
}

// Keys is every key of lang's catalogue, sorted.
func Keys(lang string) []string {
	var ks []string
	for k := range catalogues[lang] {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// QueryValue is key's value in the URL query q ("" if absent or unreadable).
func QueryValue(q, key string) string {
	vals, err := url.ParseQuery(strings.TrimPrefix(q, "?"))
	if err != nil {
		return ""
	}
	return vals.Get(key)
}

// QueryKeys is the set of keys q names (nil: none), a lab link's old
// names for its lengths read as the keys they stand for (labAliases).
func QueryKeys(q string) map[string]bool {
	vals, err := url.ParseQuery(strings.TrimPrefix(q, "?"))
	if err != nil || len(vals) == 0 {
		return nil
	}
	labAliases(vals)
	keys := map[string]bool{}
	for k := range vals {
		keys[k] = true
	}
	return keys
}

// QueryFlag reports whether key is on in q (1, true, yes).
func QueryFlag(q, key string) bool {
	switch strings.ToLower(QueryValue(q, key)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// PickLang is the page's language: ?lang= when it names one, else the
// browser's (zh-CN, zh-TW... read as zh), else English.
func PickLang(q, browser string) string {
	if l := QueryValue(q, "lang"); HasLang(l) {
		return l
	}
	b := strings.ToLower(browser)
	if i := strings.IndexAny(b, "-_"); i > 0 {
		b = b[:i]
	}
	if HasLang(b) {
		return b
	}
	return "en"
}

// GlossaryTerms are the glossary's entries, in reading order; each has
// "gloss.K" (its name spelled out) and "def.K" in every catalogue.
var GlossaryTerms = []string{"ttft", "tpot", "itl", "e2e", "pct", "attain", "goodput", "throughput", "prefill", "decode",
	"step", "batch", "budget", "roofline", "compute", "memory", "kv", "colocated", "disagg", "tp", "slo", "interference",
	"worstgap", "closedloop", "prefixcache", "hitratio", "router", "specdec"}
