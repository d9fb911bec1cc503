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
	"github.com/erpgate/erpgate/web"
)

// toolDocs is the registry's catalogue as the tool reference shows it:
// docs/tools.md and the page at web.ToolsPath are both made from it, so
// both are the catalogue the engine serves.
func toolDocs(reg *connector.Registry) []web.ToolKind {
	var kinds []web.ToolKind
	for _, kind := range reg.Kinds() {
		k := web.ToolKind{Kind: kind}
		for _, t := range reg.Tools(kind) {
			k.Tools = append(k.Tools, web.ToolDoc{
				Name:        t.Name,
				Effect:      t.Effect.String(),
				Purpose:     firstSentence(t.Description),
				Description: t.Description,
				Args:        argDocs(t.Input),
			})
		}
		kinds = append(kinds, k)
	}
	return kinds
}

// renderCatalogue writes docs/tools.md from the registry, so the published
// catalogue is the one the engine serves.
func renderCatalogue(reg *connector.Registry) []byte {
	var b bytes.Buffer
	b.WriteString("# Tool catalogue\n\n")
	b.WriteString("Generated from the connector registry by `go tool task docs`; a test fails when it is out of date. Do not edit by hand.\n\n")
	b.WriteString("Every tool returns `structuredContent` matching its output schema and the same JSON as text. ")
	b.WriteString("Failures carry a stable code (see [architecture](architecture.md#errors)).\n")
	for _, kind := range toolDocs(reg) {
		fmt.Fprintf(&b, "\n## %s (%d tools)\n\n", kind.Kind, len(kind.Tools))
		b.WriteString("| Tool | Effect | Purpose |\n|---|---|---|\n")
		for _, t := range kind.Tools {
			fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", t.Name, anchor(kind.Kind, t.Name), t.Effect, t.Purpose)
		}
		for _, t := range kind.Tools {
			fmt.Fprintf(&b, "\n### %s\n\n", anchorTitle(kind.Kind, t.Name))
			fmt.Fprintf(&b, "%s\n\n", t.Description)
			writeArguments(&b, t.Args)
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

// argDocs lists a tool's arguments by name, each description followed by
// its allowed values and its default.
func argDocs(in *schema.Schema) []web.ArgDoc {
	names := slices.Sorted(maps.Keys(in.Properties))
	required := map[string]bool{}
	for _, r := range in.Required {
		required[r] = true
	}
	var args []web.ArgDoc
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
		args = append(args, web.ArgDoc{Name: n, Type: typeName(p), Required: required[n], Description: desc})
	}
	return args
}

func writeArguments(b *bytes.Buffer, args []web.ArgDoc) {
	if len(args) == 0 {
		b.WriteString("No arguments.\n")
		return
	}
	b.WriteString("| Argument | Type | Required | Description |\n|---|---|---|---|\n")
	for _, a := range args {
		req := ""
		if a.Required {
			req = "yes"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", a.Name, a.Type, req, strings.ReplaceAll(a.Description, "|", "\\|"))
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
