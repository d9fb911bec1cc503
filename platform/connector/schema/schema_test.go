package schema

import (
	"encoding/json"
	"testing"
)

func TestObjectIsStrictAndOrdersRequired(t *testing.T) {
	s := Object(
		Prop("name", String("Document name.").Len(1, 140)).Required(),
		Prop("limit", Integer("Rows.").Min(1).Max(100).WithDefault(20)),
		Prop("kind", String("").OneOf("a", "b")).Required(),
	)
	var got map[string]any
	if err := json.Unmarshal(s.JSON(), &got); err != nil {
		t.Fatal(err)
	}
	if got["additionalProperties"] != false {
		t.Errorf("additionalProperties = %v, want false", got["additionalProperties"])
	}
	req := got["required"].([]any)
	if len(req) != 2 || req[0] != "name" || req[1] != "kind" {
		t.Errorf("required = %v", req)
	}
	limit := got["properties"].(map[string]any)["limit"].(map[string]any)
	if limit["minimum"] != 1.0 || limit["maximum"] != 100.0 || limit["default"] != 20.0 {
		t.Errorf("limit = %v", limit)
	}
}

func TestNullableAndOpenObject(t *testing.T) {
	s := OpenObject(Prop("x", String("").Nullable()))
	var got map[string]any
	if err := json.Unmarshal(s.JSON(), &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["additionalProperties"]; ok {
		t.Errorf("open object must not restrict additional properties: %v", got)
	}
	typ := got["properties"].(map[string]any)["x"].(map[string]any)["type"].([]any)
	if len(typ) != 2 || typ[1] != "null" {
		t.Errorf("type = %v", typ)
	}
}

func TestDuplicatePropertyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("duplicate property did not panic")
		}
	}()
	Object(Prop("a", String("")), Prop("a", String("")))
}
