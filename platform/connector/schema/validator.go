package schema

import (
	"bytes"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CompileValidator compiles s for the JSON Schema validator the engine
// checks every call's arguments with (draft 2020-12, formats asserted),
// under the resource name url.
func CompileValidator(s *Schema, url string) (*jsonschema.Schema, error) {
	return CompileJSON(s.JSON(), url)
}

// CompileJSON is CompileValidator for a schema as JSON, such as one a
// client read from tools/list.
func CompileJSON(raw []byte, url string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
