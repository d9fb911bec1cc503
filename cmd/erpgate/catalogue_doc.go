package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// renderCatalogue writes docs/tools.md from the registry, so the published
// catalogue is the one the engine serves.
func renderCatalogue(reg *connector.Registry) []byte {
	var b bytes.Buffer
	b.WriteString("# Tool catalogue\n\n")
	b.WriteString("Generated from the connector registry by `go tool task docs`; a test fails when it is out of date. Do not edit by hand.\n\n")
	b.WriteString("Every tool returns `structuredContent` matching its output schema and the same JSON as text. ")
	b.WriteString("Failures carry a stable code (see [architecture](architecture.md#errors)).\n")
	for _, kind := range reg.Kinds() {
		tools := reg.Tools(kind)
		fmt.Fprintf(&b, "\n## %s (%d tools)\n\n", kind, len(tools))
		b.WriteString("| Tool | Effect | Purpose |\n|---|---|---|\n")
		for _, t := range tools {
			fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", t.Name, anchor(kind, t.Name), t.Effect, firstSentence(t.Description))
		}
		for _, t := range tools {
			fmt.Fprintf(&b, "\n### %s\n\n", anchorTitle(kind, t.Name))
			fmt.Fprintf(&b, "%s\n\n", t.Description)
			writeArguments(&b, t.Input)
		}
	}
	return b.Bytes()
}

func anchor(kind, name string) string { return kind + "-" + name }

func anchorTitle(kind, name string) string {
	return fmt.Sprintf(`<a id="%s"></a>%s`, anchor(kind, name), "`"+name+"`")
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func writeArguments(b *bytes.Buffer, in *schema.Schema) {
	if len(in.Properties) == 0 {
		b.WriteString("No arguments.\n")
		return
	}
	names := slices.Sorted(maps.Keys(in.Properties))
	required := map[string]bool{}
	for _, r := range in.Required {
		required[r] = true
	}
	b.WriteString("| Argument | Type | Required | Description |\n|---|---|---|---|\n")
	for _, n := range names {
		p := in.Properties[n]
		desc := p.Description
		if len(p.Enum) > 0 {
			var vals []string
			for _, v := range p.Enum {
				vals = append(vals, fmt.Sprintf("`%v`", v))
			}
			desc += " One of " + strings.Join(vals, ", ") + "."
		}
		if p.Default != nil {
			d, _ := json.Marshal(p.Default)
			desc += fmt.Sprintf(" Default `%s`.", d)
		}
		req := ""
		if required[n] {
			req = "yes"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", n, typeName(p), req, strings.ReplaceAll(desc, "|", "\\|"))
	}
}

func typeName(s *schema.Schema) string {
	switch t := s.Type.(type) {
	case string:
		if t == "array" && s.Items != nil {
			return "array of " + typeName(s.Items)
		}
		return t
	case []string:
		return strings.Join(t, " or ")
	}
	return "any"
}
