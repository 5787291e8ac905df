package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// decodeArgs decodes a tool call's arguments into v, a pointer to the
// tool's input struct whose schema is s. Whatever the bytes, it returns
// nil or an error that names the argument and what it should be:
//
//	arguments must be a JSON object
//	unknown argument "sources"; the arguments are query, source, limit, since, until, scope
//	query is required
//	limit must be an integer, not a string
func decodeArgs(raw json.RawMessage, s *jsonschema.Schema, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return errors.New("arguments must be a JSON object")
	}
	names := make([]string, 0, len(s.Properties))
	for _, n := range s.PropertyOrder {
		names = append(names, n)
	}
	if len(names) == 0 {
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	var unknown []string
	for k, val := range fields {
		if _, ok := s.Properties[k]; !ok {
			unknown = append(unknown, k)
			continue
		}
		if bytes.Equal(bytes.TrimSpace(val), []byte("null")) {
			delete(fields, k) // null is leaving it out
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("unknown argument %s; the arguments are %s", quote(unknown[0]), strings.Join(names, ", "))
	}
	for _, k := range s.Required {
		if _, ok := fields[k]; !ok {
			return fmt.Errorf("%s is required", k)
		}
	}
	rv := reflect.ValueOf(v).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		val, ok := fields[name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(val, rv.Field(i).Addr().Interface()); err != nil {
			return fmt.Errorf("%s must be %s, not %s", name, expected(f.Type), jsonKind(val))
		}
	}
	return nil
}

// expected names a Go type as a JSON value.
func expected(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(expected(t.Elem()), "a "), "an ") + "s"
	case reflect.Bool:
		return "true or false"
	}
	return t.Kind().String()
}

// jsonKind names what a JSON value is.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "empty"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(v, ".eE") {
		return "a number with a fraction"
	}
	return "a number"
}
