package play

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"servelab/sim"
)

// Texts the simulator writes (its readers' notes and refusals,
// calibration's figure names and reasons, the profiles' sources) reach the
// page in the page's language here. sim stays free of languages: it gives
// a key and arguments beside its English (sim.Note, sim.NoteError), and
// the catalogues hold the templates as "sim."+key (the page's own keyed
// errors, errorf's, too).

// Say is a simulator's note in lang: the catalogue's template for its key
// filled with its arguments (an argument that is a note or an error is
// said in lang too); the note's own English where the catalogues lack the key.
func Say(lang string, n sim.Note) string {
	tmpl, ok := catalogues[lang]["sim."+n.Key]
	if !ok || n.Key == "" {
		return n.Text
	}
	args := make([]any, len(n.Args))
	for i, a := range n.Args {
		switch m := a.(type) {
		case sim.Note:
			a = Say(lang, m)
		case error:
			a = SayError(lang, m)
		}
		args[i] = a
	}
	return fmt.Sprintf(tmpl, args...)
}

// SayError is err's message in lang: the keyed part of it (the outermost
// sim.NoteError in its chain) said by Say, what wraps it as it is.
func SayError(lang string, err error) string {
	msg := err.Error()
	var ne *sim.NoteError
	if errors.As(err, &ne) {
		return strings.Replace(msg, ne.Note.Text, Say(lang, ne.Note), 1)
	}
	return msg
}

// errorf is the page's own keyed error ("sim."+key in the catalogues):
// its English is the English catalogue's, SayError says it in a language.
func errorf(key string, args ...any) error {
	return &sim.NoteError{Note: sim.Note{Key: key, Args: args, Text: fmt.Sprintf(catalogueEN["sim."+key], args...)}}
}

// SayAll is Say of every note, or lines itself (the English) where the
// notes do not match them one for one.
func SayAll(lang string, lines []string, notes []sim.Note) []string {
	if len(notes) != len(lines) {
		return lines
	}
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = Say(lang, n)
	}
	return out
}

// profileTemplates are the catalogue keys of the texts profiles hold that
// are written from a template (by `servelab fidelity --fit`, by sim's
// fallbacks and by a calibration): ProfileText recognises a text by its
// English template and carries its variable parts into lang's.
var profileTemplates = []string{"ptpl.fitall", "ptpl.mean3", "ptpl.fitfree", "ptpl.samechip", "ptpl.chipvalue", "ptpl.fitted", "ptpl.gpufit", "ptpl.mean", "ptpl.nofit", "sim.cal.source", "sim.cal.gpunote"}

// profileIndex maps the built-in profiles' fixed texts (catalogue keys
// "ptext.*", English word for word) to their keys; profilePatterns match
// profileTemplates' English. Built on first use.
var (
	profileIndex    map[string]string
	profilePatterns []*regexp.Regexp
)

// fmtVerb matches one fmt verb (or %%) of a template.
var fmtVerb = regexp.MustCompile(`%(?:\[(\d+)\])?[-+# 0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]`)

// templatePattern is the regexp of an English template: its verbs become
// groups, the rest stays literal.
func templatePattern(tmpl string) *regexp.Regexp {
	var sb strings.Builder
	sb.WriteString("^")
	last := 0
	for _, m := range fmtVerb.FindAllStringIndex(tmpl, -1) {
		sb.WriteString(regexp.QuoteMeta(tmpl[last:m[0]]))
		if tmpl[m[1]-1] == '%' {
			sb.WriteString("%")
		} else {
			sb.WriteString("(.+?)")
		}
		last = m[1]
	}
	sb.WriteString(regexp.QuoteMeta(tmpl[last:]))
	sb.WriteString("$")
	return regexp.MustCompile(sb.String())
}

// fillVerbs writes tmpl with its verbs replaced by parts, taken in order
// or by their %[n] index.
func fillVerbs(tmpl string, parts []string) string {
	next := 0
	return fmtVerb.ReplaceAllStringFunc(tmpl, func(v string) string {
		if v == "%%" {
			return "%"
		}
		i := next
		if m := fmtVerb.FindStringSubmatch(v); m[1] != "" {
			n, _ := strconv.Atoi(m[1])
			i = n - 1
		}
		next = i + 1
		if i < 0 || i >= len(parts) {
			return v
		}
		return parts[i]
	})
}

// ProfileText is a text a profile holds (a constant's source, a GPU's
// note) in lang: a built-in profile's text by its catalogue entry, a
// templated one (a fit's, a calibration's) by its template with its
// variable parts copied over; any other text (a user's own profile's)
// stays as written.
func ProfileText(lang, text string) string {
	if profileIndex == nil {
		profileIndex = map[string]string{}
		for k, v := range catalogueEN {
			if strings.HasPrefix(k, "ptext.") {
				profileIndex[v] = k
			}
		}
		for _, k := range profileTemplates {
			profilePatterns = append(profilePatterns, templatePattern(catalogueEN[k]))
		}
	}
	if k, ok := profileIndex[text]; ok {
		return T(lang, k)
	}
	for i, re := range profilePatterns {
		if m := re.FindStringSubmatch(text); m != nil {
			return fillVerbs(T(lang, profileTemplates[i]), m[1:])
		}
	}
	return text
}

// ConstMeaning is what a profile constant means, in lang (sim's English
// where the catalogues' English is not sim's: a stale translation is
// never shown).
func ConstMeaning(lang string, c sim.ConstantInfo) string {
	if en, ok := catalogueEN["pconst."+c.Name]; ok && en == c.Meaning {
		return T(lang, "pconst."+c.Name)
	}
	return c.Meaning
}
