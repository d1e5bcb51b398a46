package sim

// The file readers' shared limits and refusals: sim/lab's measured-JSON
// reader and the benchmark readers name a bad field the same way.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// MaxMeasuredBytes bounds what the file readers (sim/lab's and the benchmark readers) accept.
const MaxMeasuredBytes = 256 << 20

// MaxMeasuredSeconds bounds any one time in a measured file (a gap, a TTFT,
// a run's duration): 11.6 days, beyond any benchmark, and small enough that
// sums and means of them stay finite (1e308 made TPOT +Inf).
const MaxMeasuredSeconds = 1e6

// UTF8BOM starts files some Windows editors save; encoding/json refuses it.
var UTF8BOM = []byte("\xef\xbb\xbf")

// FieldError returns encoding/json's error err as one that names the field
// (where, then the field inside it), with a keyed note (see Note).
func FieldError(err error, where string) error {
	var te *json.UnmarshalTypeError
	if ok := asType(err, &te); ok {
		f := te.Field
		if f == "" {
			return Refuse("field.type", "%s: want %s, got %s", where, goType(te.Type), jsonValue(te.Value))
		}
		return Refuse("field.type", "%s: want %s, got %s", where+"."+f, goType(te.Type), jsonValue(te.Value))
	}
	if strings.HasPrefix(err.Error(), where) {
		return err
	}
	return fmt.Errorf("%s: %w", where, err)
}

// goType is the Go type a JSON value was to fill, as a note keyed by its
// kind (a page names the kind; the English is the type, as encoding/json
// writes it).
func goType(t reflect.Type) Note {
	name := fmt.Sprint(t)
	if t == nil {
		return Say("json.other", "%s", name)
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Say("type.int", "%s", name)
	case reflect.Float32, reflect.Float64:
		return Say("type.number", "%s", name)
	case reflect.String:
		return Say("type.string", "%s", name)
	case reflect.Bool:
		return Say("type.bool", "%s", name)
	case reflect.Slice, reflect.Array:
		return Say("type.list", "%s", name)
	case reflect.Struct, reflect.Map:
		return Say("type.object", "%s", name)
	}
	return Say("json.other", "%s", name)
}

// jsonValue is encoding/json's name of the value it found ("string",
// "number 1.5") as a note keyed by the value's kind.
func jsonValue(v string) Note {
	switch {
	case v == "string":
		return Say("json.string", "string")
	case v == "number":
		return Say("json.number", "number")
	case strings.HasPrefix(v, "number "):
		return Say("json.numlit", "number %s", strings.TrimPrefix(v, "number "))
	case v == "object":
		return Say("json.object", "object")
	case v == "array":
		return Say("json.array", "array")
	case v == "bool":
		return Say("json.bool", "bool")
	}
	return Say("json.other", "%s", v)
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

// ClipJSON returns b as a string, cut to 40 bytes with "..." when longer.
func ClipJSON(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
