package connectortest

import (
	"bytes"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/erpgate/erpgate/platform/connector/schema"
)

// compiled caches compiled schemas by their JSON text: a connector's
// tests build its catalogue many times, each with new *schema.Schema
// values, but the same few texts.
var compiled sync.Map // string -> *jsonschema.Schema

// Validate checks doc, a JSON text, against s as the engine checks a tool's
// arguments: the full JSON Schema validator (draft 2020-12, formats
// asserted). A connector's handler tests use it on arguments before the
// handler runs and on results after, so a result that breaks the output
// schema fails there.
func Validate(s *schema.Schema, doc []byte) error {
	text := s.JSON()
	v, ok := compiled.Load(string(text))
	if !ok {
		c, err := schema.CompileValidator(s, "erpgate:///connectortest/schema.json")
		if err != nil {
			return err
		}
		v, _ = compiled.LoadOrStore(string(text), c)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return v.(*jsonschema.Schema).Validate(inst)
}
