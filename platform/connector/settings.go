package connector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// DecodeSettings decodes a site's connector settings into T, a struct whose
// json tags name the settings. It is strict: an unknown setting, a value of
// the wrong type, anything but one JSON object, or text after it is an
// INVALID_ARGUMENT *toolerr.Error whose message names the setting and lists
// the known ones, in words an operator can act on. Empty or null settings
// are T's zero value. NormalizeSettings then checks values and fills in
// defaults.
func DecodeSettings[T any](raw json.RawMessage) (T, error) {
	var s T
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	known := settingNames(reflect.TypeOf(s))
	fail := func(format string, args ...any) (T, error) {
		var zero T
		msg := fmt.Sprintf(format, args...)
		if len(known) > 0 {
			msg += " (known settings: " + strings.Join(known, ", ") + ")"
		}
		return zero, toolerr.New(toolerr.InvalidArgument, "%s", msg)
	}
	if raw[0] != '{' {
		return fail("the settings must be one JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typ) && typ.Field != "":
			kind, _, _ := strings.Cut(typ.Value, " ") // "number 1.5"
			return fail("the setting %s must be %s, not a JSON %s", typ.Field, typeWords(typ.Type), kind)
		case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
			return fail("the settings are not valid JSON")
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.TrimPrefix(err.Error(), "json: unknown field ") // Go-quoted
			if unquoted, uerr := strconv.Unquote(name); uerr == nil {
				name = unquoted
			}
			return fail("there is no setting %s", toolerr.Quote(name))
		}
		return fail("the settings do not decode: %s", err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fail("the settings must be one JSON object, with nothing after it")
	}
	return s, nil
}

// settingNames lists the json names of t's fields, for messages.
func settingNames(t reflect.Type) []string {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				names = append(names, settingNames(f.Type)...)
				continue
			}
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// typeWords says in words what a Go type holds.
func typeWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return typeWords(t.Elem())
	}
	return "a " + t.String()
}

// SettingError is a setting value NormalizeSettings refuses, for the pages
// that ask for settings in a form: Key names the setting as the settings
// JSON has it ("tenant"), and Problem says what is wrong with its value in
// a phrase that follows the form's label for it ("holds a control
// character"), without repeating the value. A connector returns it as the
// cause of its INVALID_ARGUMENT *toolerr.Error (InvalidSetting), whose
// message the admin API shows.
type SettingError struct{ Key, Problem string }

func (e *SettingError) Error() string { return e.Key + " " + e.Problem }

// InvalidSetting is NormalizeSettings' refusal of the value of the setting
// key: an INVALID_ARGUMENT *toolerr.Error with the message format and args
// give, whose cause is a *SettingError of key and problem.
func InvalidSetting(key, problem, format string, args ...any) *toolerr.Error {
	return toolerr.Wrap(toolerr.InvalidArgument, &SettingError{Key: key, Problem: problem}, format, args...)
}
