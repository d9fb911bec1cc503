package mcpengine

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

func compileTool(kind string, t connector.Tool) (*compiledTool, error) {
	compiled, err := schema.CompileValidator(t.Input, "erpgate:///"+kind+"/"+t.Name+"/input.json")
	if err != nil {
		return nil, fmt.Errorf("mcpengine: %s/%s: input schema: %w", kind, t.Name, err)
	}
	return &compiledTool{kind: kind, tool: t, input: compiled}, nil
}

// mcpTool converts a catalogue entry into the tool mcp-go advertises.
func mcpTool(t connector.Tool) mcp.Tool {
	h := t.Hints()
	return mcp.Tool{
		Name:            t.Name,
		Title:           t.Title,
		Description:     t.Description,
		RawInputSchema:  t.Input.JSON(),
		RawOutputSchema: AdvertisedOutputSchema(t.Output),
		Annotations: mcp.ToolAnnotation{
			Title:           t.Title,
			ReadOnlyHint:    &h.ReadOnly,
			DestructiveHint: &h.Destructive,
			IdempotentHint:  &h.Idempotent,
			OpenWorldHint:   &h.OpenWorld,
		},
	}
}

// errorEnvelopeSchema describes the result of a failed call, which a client
// that asked for X-MCP-Error-Format: result receives as a normal result.
var errorEnvelopeSchema = map[string]*schema.Schema{
	"ok":     schema.Boolean("false when the call failed; absent on success."),
	"status": schema.String("\"error\" when the call failed; absent on success.").OneOf("error"),
	"error": schema.Object(
		schema.Prop("code", schema.String("Stable error code.")).Required(),
		schema.Prop("message", schema.String("What went wrong and what to change.")).Required(),
		schema.Prop("retryable", schema.Boolean("Whether repeating the same call later may succeed.")).Required(),
		schema.Prop("retry_after_seconds", schema.Integer("How long to wait before retrying, when known.")),
		schema.Prop("approval_url", schema.String("For APPROVAL_REQUIRED: the page where the user approves the change.")),
	),
}

// AdvertisedOutputSchema is the output schema a client sees: the tool's own
// schema, widened so that the error envelope also validates. A result is
// either the tool's data (its required properties present) or an envelope
// with ok=false and an error object.
func AdvertisedOutputSchema(out *schema.Schema) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(out.JSON(), &m); err != nil {
		panic("mcpengine: output schema: " + err.Error())
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	for name, s := range errorEnvelopeSchema {
		if _, clash := props[name]; clash {
			panic("mcpengine: output schema must not define " + name)
		}
		var v any
		_ = json.Unmarshal(s.JSON(), &v)
		props[name] = v
	}
	m["properties"] = props
	if req, ok := m["required"]; ok {
		delete(m, "required")
		m["anyOf"] = []any{
			map[string]any{"required": req},
			map[string]any{"required": []any{"ok", "error"}},
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic("mcpengine: output schema: " + err.Error())
	}
	return b
}
