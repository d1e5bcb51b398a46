package labserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// decodeExact decodes a JSON object into the struct v points to, matching
// keys exactly as vLLM (pydantic) does. encoding/json alone matches keys
// ignoring case with Unicode folding, so "Max_Tokens" or "max_to\u212aens"
// (Kelvin sign) would set max_tokens here while a proxy in front, checking the
// exact key, let them through. Unknown keys are ignored; a key that differs
// from a field's name only in case is refused, naming the field. Nested
// structs (and pointers to them) are decoded the same way.
func decodeExact(data []byte, v any) error {
	return decodeStruct(data, reflect.ValueOf(v).Elem(), "")
}

func decodeStruct(data []byte, sv reflect.Value, path string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		var te *json.UnmarshalTypeError
		if asTypeError(err, &te) {
			if path == "" {
				return &badRequest{"", "the request body must be a JSON object, got " + te.Value}
			}
			return &json.UnmarshalTypeError{Value: te.Value, Type: sv.Type(), Field: strings.TrimSuffix(path, ".")}
		}
		return err
	}
	if fields == nil { // null
		return nil
	}
	st := sv.Type()
	names := make(map[string]int, st.NumField())
	for i := 0; i < st.NumField(); i++ {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names[name] = i
		}
	}
	for key, raw := range fields {
		i, ok := names[key]
		if !ok {
			for name := range names {
				if strings.EqualFold(key, name) {
					return &badRequest{path + name, fmt.Sprintf("unknown field %q: did you mean %q? (field names are case-sensitive)", clipKey(key), path+name)}
				}
			}
			continue
		}
		if err := decodeField(raw, sv.Field(i), path+key); err != nil {
			return err
		}
	}
	return nil
}

func decodeField(raw json.RawMessage, fv reflect.Value, path string) error {
	t := fv.Type()
	if t.Kind() == reflect.Struct {
		return decodeStruct(raw, fv, path+".")
	}
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		if string(raw) == "null" {
			fv.SetZero()
			return nil
		}
		p := reflect.New(t.Elem())
		if err := decodeStruct(raw, p.Elem(), path+"."); err != nil {
			return err
		}
		fv.Set(p)
		return nil
	}
	if err := json.Unmarshal(raw, fv.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if asTypeError(err, &te) {
			return &json.UnmarshalTypeError{Value: te.Value, Type: t, Field: path}
		}
		return err
	}
	return nil
}

func asTypeError(err error, te **json.UnmarshalTypeError) bool {
	e, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*te = e
	}
	return ok
}

func clipKey(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
