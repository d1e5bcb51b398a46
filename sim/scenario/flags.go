package scenario

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// BindFlags defines on fs a flag for every knob of the given groups that
// has one, writing into x; a typed assumption is marked in x.Typed. The
// flags' defaults are x's values when bound (start from Default).
func BindFlags(fs *flag.FlagSet, x *Experiment, groups Group) {
	for i := range Knobs {
		k := &Knobs[i]
		if k.Flag != "" && k.Group&groups != 0 {
			bind(fs, x, k)
		}
	}
}

// bind defines k's flag, its default x's value (left out of the help
// when it is its kind's zero, as the flag package does).
func bind(fs *flag.FlagSet, x *Experiment, k *Knob) {
	f := &knobFlag{k: k, x: x}
	fs.Var(f, k.Flag, k.Usage)
	def := f.String()
	if def == "0" || def == "false" {
		def = ""
	}
	fs.Lookup(k.Flag).DefValue = def
}

// knobFlag is one knob as a flag.Value.
type knobFlag struct {
	k *Knob
	x *Experiment
}

func (f *knobFlag) String() string {
	if f == nil || f.k == nil || f.x == nil {
		return ""
	}
	k := f.k
	switch {
	case k.Kind == Choice:
		return k.getS(f.x)
	case k.FlagWords[0] != "":
		return k.FlagWords[int(k.get(f.x))]
	case k.Kind == Bool:
		return strconv.FormatBool((k.get(f.x) != 0) != k.FlagNegates)
	}
	return formatNum(k.get(f.x))
}

// TypeName is the value's kind as a help line names it (int, float, string).
func (f *knobFlag) TypeName() string {
	switch {
	case f.IsBoolFlag():
		return ""
	case f.k.Name == "seed":
		return "uint"
	case f.k.Kind == Int:
		return "int"
	case f.k.Kind == Float:
		return "float"
	}
	return "string"
}

// IsBoolFlag lets a Bool knob's flag stand alone (--ideal).
func (f *knobFlag) IsBoolFlag() bool { return f.k.Kind == Bool && f.k.FlagWords[0] == "" }

func (f *knobFlag) Set(s string) error {
	k, x := f.k, f.x
	switch {
	case k.Kind == Choice:
		k.setS(x, s) // Validate and Build name a bad choice with the valid ones
		return nil
	case k.FlagWords[0] != "":
		for i, w := range k.FlagWords {
			if s == w {
				k.SetValue(x, float64(i))
				return nil
			}
		}
		return fmt.Errorf("must be %s, got %q", strings.Join(k.FlagWords[:], " or "), s)
	case k.Kind == Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		k.SetValue(x, b2f(b != k.FlagNegates))
		return nil
	case k.Kind == Int && k.Name == "seed":
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return err
		}
		x.Seed = v
		return nil
	case k.Kind == Int:
		v, err := strconv.ParseInt(s, 0, strconv.IntSize)
		if err != nil {
			return err
		}
		k.SetValue(x, float64(v))
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	k.SetValue(x, v)
	return nil
}

// Flags writes the experiment as the CLI's flags for the given groups:
// every knob that differs from its default, and every typed assumption.
func Flags(x *Experiment, groups Group) []string {
	var out []string
	for i := range Knobs {
		k := &Knobs[i]
		if k.Flag == "" || k.Group&groups == 0 {
			continue
		}
		if k.IsDefault(x) && !(k.Bit != 0 && x.Typed&k.Bit != 0) {
			continue
		}
		f := &knobFlag{k: k, x: x}
		if f.IsBoolFlag() {
			out = append(out, "--"+k.Flag+"="+f.String())
			continue
		}
		out = append(out, "--"+k.Flag, f.String())
	}
	return out
}

// BindKnobs defines the flags of the named knobs only (by their flag
// names), for a command that takes a few of a group's knobs.
func BindKnobs(fs *flag.FlagSet, x *Experiment, flags ...string) {
	for _, name := range flags {
		k, ok := KnobByFlag(name)
		if !ok {
			panic("scenario: no knob has the flag --" + name)
		}
		bind(fs, x, k)
	}
}
