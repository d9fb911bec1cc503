package adminapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// maxBodyBytes bounds every request body. The largest legitimate body, a
// site with settings, is a few hundred bytes.
const maxBodyBytes = 64 << 10

// decodeBody decodes the JSON object in the request body into dst, a
// pointer to a struct with json tags. Fields not in dst are refused, all of
// them named in one message. An empty body is accepted only if allowEmpty,
// and then leaves dst untouched.
func decodeBody(c echo.Context, dst any, allowEmpty bool) error {
	req := c.Request()
	if ct := req.Header.Get(echo.HeaderContentType); ct != "" {
		mediaType, _, err := mime.ParseMediaType(ct)
		if err != nil || mediaType != echo.MIMEApplicationJSON {
			return newError(http.StatusUnsupportedMediaType, codeInvalidRequest, "the request body must be JSON, sent with Content-Type: application/json")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, maxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return newError(http.StatusRequestEntityTooLarge, codeInvalidRequest, "the request body is larger than %d KiB", maxBodyBytes>>10)
		}
		return invalidRequest("the request body could not be read")
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		if allowEmpty {
			return nil
		}
		return invalidRequest("the request body must be a JSON object")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return invalidRequest("the request body must be one JSON object: %s", syntaxProblem(err))
	}
	allowed := jsonFieldNames(dst)
	var unknown []string
	for name := range top {
		if !slices.Contains(allowed, name) {
			unknown = append(unknown, toolerr.Quote(name))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return invalidRequest("unknown %s %s; this request accepts: %s",
			plural(len(unknown), "field", "fields"), strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return invalidRequest("%s must be %s", toolerr.Quote(typeErr.Field), jsonTypeName(typeErr.Type))
		}
		return invalidRequest("the request body is not valid: %s", syntaxProblem(err))
	}
	return nil
}

// syntaxProblem describes a JSON decoding error without echoing the body.
func syntaxProblem(err error) string {
	var syntaxErr *json.SyntaxError
	switch {
	case err == nil:
		return "got null"
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("malformed JSON at byte %d", syntaxErr.Offset)
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return "got " + typeErr.Value
	}
	return "malformed JSON"
}

// jsonFieldNames lists the JSON names of the fields of the struct dst
// points to, in declaration order.
func jsonFieldNames(dst any) []string {
	t := reflect.TypeOf(dst).Elem()
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// jsonTypeName names the JSON type a Go type decodes from.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Float64:
		return "a number"
	}
	return "of another type"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
