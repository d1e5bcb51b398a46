package scenario

import (
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Note is something a link's or a control's value could not keep as
// given: Key names the page catalogue's template ("note."+Key), Knob the
// setting (nil for a key that names none) and Args fill the template after
// the knob's label.
type Note struct {
	Key  string
	Knob *Knob
	Args []string
}

// Notes the setters return (templates in the page's catalogues):
//
//	range:   the value (Args[0]) was outside [Args[1], Args[2]]: kept Args[3]
//	nan:     the value (Args[0]) is not a finite number: kept the default Args[1]
//	notnum:  the value (Args[0]) is not a number: kept Args[1]
//	choice:  the value (Args[0]) is none of Args[1]: kept Args[2]
//	unknown: Args[0] is no setting
const (
	NoteRange   = "range"
	NoteNaN     = "nan"
	NoteNotNum  = "notnum"
	NoteChoice  = "choice"
	NoteUnknown = "unknown"
)

// SetURL applies one key=value of a link or a control, values in the
// page's unit: numbers are clamped into the knob's range (rounded when its
// step is whole), choices matched case-insensitively. It returns a note
// when the value could not be kept as given (nil when it was), and ok
// false when key is no knob's.
func (x *Experiment) SetURL(key, value string) (note *Note, ok bool) {
	k, ok := KnobByURL(key)
	if !ok {
		return nil, false
	}
	if k.Kind == Choice {
		v, valid := k.Pick(value)
		if !valid {
			return &Note{Key: NoteChoice, Knob: k, Args: []string{value, strings.Join(k.Choices(), ", "), k.getS(x)}}, true
		}
		k.setS(x, v)
		return nil, true
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil {
		return &Note{Key: NoteNotNum, Knob: k, Args: []string{value, formatNum(round9(k.get(x) * k.Scale()))}}, true
	}
	return k.setPage(x, v), true
}

// setPage stores v, in the page's unit, clamped into the knob's range.
func (k *Knob) setPage(x *Experiment, v float64) *Note {
	s := k.Scale()
	if math.IsNaN(v) || math.IsInf(v, 0) {
		k.reset(x)
		x.Typed |= k.Bit
		return &Note{Key: NoteNaN, Knob: k, Args: []string{formatNum(v), formatNum(round9(k.Def * s))}}
	}
	orig := v
	if k.Step*s >= 1 {
		v = math.Round(v) // whole-number settings round silently
	}
	lo, hi := round9(k.Min*s), round9(k.Max*s)
	c := math.Max(lo, math.Min(hi, v))
	k.SetValue(x, c/s)
	if c != v {
		return &Note{Key: NoteRange, Knob: k, Args: []string{formatNum(orig), formatNum(lo), formatNum(hi), formatNum(c)}}
	}
	return nil
}

// Query writes the experiment as a link's query, every knob with a URL key
// in the table's order: a choice left empty and an assumption not typed are
// left out (the profile supplies it).
func (x *Experiment) Query() string {
	var b strings.Builder
	for i := range Knobs {
		k := &Knobs[i]
		if k.URL == "" || k.Bit != 0 && x.Typed&k.Bit == 0 {
			continue
		}
		v := k.URLText(x)
		if k.Kind == Choice && (v == "" || k.Name == "profile" && v == k.DefS) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k.URL)
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v))
	}
	return b.String()
}

// ParseQuery applies a link's query over x: a preset first (when named and
// known), the profile and GPU next (the profile's values are for the GPU),
// then every other knob in sorted order. An assumption the link gives at
// the profile's own value is the profile's, not typed (links before typed
// assumptions were kept wrote them all). Keys that are no knob's are
// returned in other for the caller (the page's view and mode keys);
// presetName is the preset applied ("" none).
func (x *Experiment) ParseQuery(vals url.Values) (notes []Note, other url.Values, presetName string) {
	return x.ParseQueryWith(vals, nil)
}

// Picker sets a key the caller resolves itself (a page's uploaded models
// and profiles are no catalogue's); handled false leaves the key to SetURL.
type Picker func(x *Experiment, key, value string) (note *Note, handled bool)

// ParseQueryWith is ParseQuery with pick trying each key first.
func (x *Experiment) ParseQueryWith(vals url.Values, pick Picker) (notes []Note, other url.Values, presetName string) {
	set := func(key, value string) (*Note, bool) {
		if pick != nil {
			if n, ok := pick(x, key, value); ok {
				return n, true
			}
		}
		return x.SetURL(key, value)
	}
	other = url.Values{}
	if p := vals.Get("preset"); p != "" {
		if pr, ok := PresetByName(p); ok {
			pr.Apply(x)
			presetName = pr.Name
		} else {
			notes = append(notes, Note{Key: "nopreset", Args: []string{p}})
		}
	}
	for _, key := range []string{"gpu", "profile"} {
		if v, ok := vals[key]; ok && len(v) > 0 {
			if n, _ := set(key, v[0]); n != nil {
				notes = append(notes, *n)
			}
		}
	}
	x.FillAssumptions()
	keys := make([]string, 0, len(vals))
	for k := range vals {
		if k != "preset" && k != "gpu" && k != "profile" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var given Assumption
	for _, key := range keys {
		n, ok := set(key, vals.Get(key))
		if !ok {
			other[key] = vals[key]
			continue
		}
		if k, _ := KnobByURL(key); k.Bit != 0 {
			given |= k.Bit
		}
		if n != nil {
			notes = append(notes, *n)
		}
	}
	x.untypeProfileValues(given)
	return notes, other, presetName
}

// FillAssumptions sets the assumptions not typed to the active profile's
// values for the GPU, rounded as the page's sliders hold them, so a
// control shows what the step model uses.
func (x *Experiment) FillAssumptions() {
	vals := x.profileValues()
	for i := range Knobs {
		k := &Knobs[i]
		if k.Bit == 0 || x.Typed&k.Bit != 0 {
			continue
		}
		if v, ok := vals[k.Name]; ok {
			k.set(x, v)
		} else {
			k.set(x, k.Def)
		}
	}
}

// profileValues are the active profile's assumptions for the GPU, in the
// field's unit, rounded to 4 decimals of the page's unit.
func (x *Experiment) profileValues() map[string]float64 {
	out := map[string]float64{}
	p, err := x.profile()
	if err != nil {
		return out
	}
	for _, c := range p.Resolve(x.GPU) {
		if k, ok := KnobByName(c.Name); ok && k.Bit != 0 {
			out[c.Name] = math.Round(c.Value*k.Scale()*1e4) / 1e4 / k.Scale()
		}
	}
	return out
}

// untypeProfileValues clears the typed mark of the given assumptions that
// hold the profile's own (rounded) value.
func (x *Experiment) untypeProfileValues(given Assumption) {
	vals := x.profileValues()
	for i := range Knobs {
		k := &Knobs[i]
		if k.Bit == 0 || given&k.Bit == 0 {
			continue
		}
		if v, ok := vals[k.Name]; ok && round9(v*k.Scale()) == round9(k.get(x)*k.Scale()) {
			x.Typed &^= k.Bit
			k.set(x, v)
		}
	}
}
