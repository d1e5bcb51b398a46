// Package jsonread holds what the file readers under sim share: the limits
// on a file and on one time in it, and the refusal that names a bad JSON
// field. sim/lab (run.py's measured JSON) and sim/results (other tools'
// files) import it, so that both word a bad field the same way; being
// internal, it adds nothing to what sim exports. It imports sim for its
// keyed notes (sim.Note, sim.Refuse) and nothing else of the module.
package jsonread

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"servelab/sim"
)

// MaxBytes bounds what the file readers (sim/lab's and sim/results') accept.
const MaxBytes = 256 << 20

// MaxSeconds bounds any one time in a measured file (a gap, a TTFT,
// a run's duration): 11.6 days, beyond any benchmark, and small enough that
// sums and means of them stay finite (1e308 made TPOT +Inf).
const MaxSeconds = 1e6

// BOM is the UTF-8 byte order mark that starts files some Windows editors
// save; encoding/json refuses it, so the readers trim it first.
var BOM = []byte("\xef\xbb\xbf")

// FieldError returns encoding/json's error err as one that names the field
// (where, then the field inside it), with a keyed note (see sim.Note).
func FieldError(err error, where string) error {
	var te *json.UnmarshalTypeError
	if ok := asType(err, &te); ok {
		f := te.Field
		if f == "" {
			return sim.Refuse("field.type", "%s: want %s, got %s", where, goType(te.Type), jsonValue(te.Value))
		}
		return sim.Refuse("field.type", "%s: want %s, got %s", where+"."+f, goType(te.Type), jsonValue(te.Value))
	}
	if strings.HasPrefix(err.Error(), where) {
		return err
	}
	return fmt.Errorf("%s: %w", where, err)
}

// goType is the Go type a JSON value was to fill, as a note keyed by its
// kind (a page names the kind; the English is the type, as encoding/json
// writes it).
func goType(t reflect.Type) sim.Note {
	name := fmt.Sprint(t)
	if t == nil {
		return sim.Say("json.other", "%s", name)
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return sim.Say("type.int", "%s", name)
	case reflect.Float32, reflect.Float64:
		return sim.Say("type.number", "%s", name)
	case reflect.String:
		return sim.Say("type.string", "%s", name)
	case reflect.Bool:
		return sim.Say("type.bool", "%s", name)
	case reflect.Slice, reflect.Array:
		return sim.Say("type.list", "%s", name)
	case reflect.Struct, reflect.Map:
		return sim.Say("type.object", "%s", name)
	}
	return sim.Say("json.other", "%s", name)
}

// jsonValue is encoding/json's name of the value it found ("string",
// "number 1.5") as a note keyed by the value's kind.
func jsonValue(v string) sim.Note {
	switch {
	case v == "string":
		return sim.Say("json.string", "string")
	case v == "number":
		return sim.Say("json.number", "number")
	case strings.HasPrefix(v, "number "):
		return sim.Say("json.numlit", "number %s", strings.TrimPrefix(v, "number "))
	case v == "object":
		return sim.Say("json.object", "object")
	case v == "array":
		return sim.Say("json.array", "array")
	case v == "bool":
		return sim.Say("json.bool", "bool")
	}
	return sim.Say("json.other", "%s", v)
}

func asType(err error, te **json.UnmarshalTypeError) bool {
	for err != nil {
		if t, ok := err.(*json.UnmarshalTypeError); ok {
			*te = t
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// Clip returns b as a string, cut to 40 bytes with "..." when longer.
func Clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
