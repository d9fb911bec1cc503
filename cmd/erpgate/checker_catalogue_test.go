package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/erpgate/erpgate/platform/connector/schema"
)

// TestArgumentCheckerOnEveryTool holds the engine's fast argument checker
// to the full validator on every tool of both catalogues: it must compile
// for every tool (or the fast path would silently not apply), never accept
// arguments the full validator rejects, and accept itself the plain
// arguments the full validator accepts. The arguments are generated from
// each tool's schema: its bounds and one past them, its enum values,
// defaults and examples, dates valid and not, wrong types, unknown names.
func TestArgumentCheckerOnEveryTool(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	tools, docs, fastAccepted := 0, 0, 0
	for _, kind := range reg.Kinds() {
		for _, tool := range reg.Tools(kind) {
			tools++
			fast := schema.CompileChecker(tool.Input)
			if fast == nil {
				t.Errorf("%s/%s: the fast checker does not compile this input schema", kind, tool.Name)
				continue
			}
			full, err := schema.CompileValidator(tool.Input, "mem:///"+tool.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range argumentDocs(tool.Input) {
				docs++
				want := fullValid(full, g.doc)
				got := fast.Valid(g.doc)
				switch {
				case got && !want:
					t.Errorf("%s/%s: the fast checker accepts %s, the full validator rejects it", kind, tool.Name, g.doc)
				case want && !got && g.plain:
					t.Errorf("%s/%s: the fast checker leaves %s to the full validator, which accepts it", kind, tool.Name, g.doc)
				}
				if got {
					fastAccepted++
				}
			}
		}
	}
	if tools < 20 || fastAccepted < tools {
		t.Fatalf("%d tools, %d generated documents, %d accepted by the fast checker: the generator is not exercising the catalogues", tools, docs, fastAccepted)
	}
	t.Logf("%d tools, %d argument documents, %d accepted by the fast checker", tools, docs, fastAccepted)
}

func fullValid(s *jsonschema.Schema, doc []byte) bool {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	return err == nil && s.Validate(v) == nil
}

type argDoc struct {
	doc []byte
	// plain: no escaped string and no fraction, so the fast checker must
	// decide it itself.
	plain bool
}

type candidate struct {
	v     any
	plain bool
}

// argumentDocs returns argument objects for the object schema s: the
// required arguments alone, then with each property set to each candidate
// value, then with an unknown argument.
func argumentDocs(s *schema.Schema) []argDoc {
	names := slices.Sorted(maps.Keys(s.Properties))
	base := map[string]any{}
	for _, r := range s.Required {
		base[r] = candidates(s.Properties[r])[0].v
	}
	with := func(extra map[string]any, plain bool) argDoc {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			panic(err)
		}
		doc := bytes.TrimSpace(buf.Bytes())
		return argDoc{doc: doc, plain: plain && !bytes.Contains(doc, []byte(`\`))}
	}
	out := []argDoc{with(nil, true), {doc: []byte(`{}`), plain: true}, with(map[string]any{"no_such_argument": 1}, true)}
	for _, n := range names {
		for _, c := range candidates(s.Properties[n]) {
			out = append(out, with(map[string]any{n: c.v}, c.plain))
		}
		for _, r := range s.Required {
			if r == n {
				m := map[string]any{}
				for k, v := range base {
					if k != n {
						m[k] = v
					}
				}
				b, _ := json.Marshal(m)
				out = append(out, argDoc{doc: b, plain: true})
			}
		}
	}
	return out
}

// candidates returns values for s, valid ones first when s has any.
func candidates(s *schema.Schema) []candidate {
	var out []candidate
	add := func(v any) { out = append(out, candidate{v: v, plain: true}) }
	types := map[string]bool{}
	switch t := s.Type.(type) {
	case string:
		types[t] = true
	case []string:
		for _, n := range t {
			types[n] = true
		}
	}
	for _, e := range s.Enum {
		add(e)
	}
	if s.Default != nil {
		add(s.Default)
	}
	for _, e := range s.Examples {
		add(e)
	}
	switch {
	case types["string"] && s.Format == "date":
		add("2024-02-29")
		add("2023-02-29")
		add("2024-1-1")
	case types["string"]:
		lo, hi := 1, 8
		if s.MinLength != nil {
			lo = *s.MinLength
		}
		if s.MaxLength != nil {
			hi = *s.MaxLength
		}
		add(strings.Repeat("a", lo))
		add(strings.Repeat("é", hi))
		add(strings.Repeat("b", hi+1))
		if lo > 0 {
			add(strings.Repeat("c", lo-1))
		}
		add("ACME-001")
		out = append(out, candidate{v: "quote\"d", plain: false})
	case types["integer"] || types["number"]:
		lo, hi := 0.0, 20.0
		if s.Minimum != nil {
			lo = *s.Minimum
		}
		if s.Maximum != nil {
			hi = *s.Maximum
		}
		add(int64(lo))
		add(int64(hi))
		add(int64(lo) - 1)
		add(int64(hi) + 1)
		out = append(out, candidate{v: json.Number("2.0"), plain: false}, candidate{v: json.Number("1.5"), plain: false})
	case types["boolean"]:
		add(true)
		add(false)
	case types["array"]:
		if s.Items != nil {
			item := candidates(s.Items)
			add([]any{item[0].v})
			all := make([]any, 0, len(item))
			plain := true
			for _, c := range item {
				all = append(all, c.v)
				plain = plain && c.plain
			}
			out = append(out, candidate{v: all, plain: plain})
		}
		add([]any{})
	case types["object"]:
		m := map[string]any{}
		for _, r := range s.Required {
			m[r] = candidates(s.Properties[r])[0].v
		}
		add(m)
		add(map[string]any{})
	}
	if types["null"] {
		add(nil)
	}
	// Wrong types.
	for _, v := range []any{"x", int64(7), true, nil, []any{}, map[string]any{}} {
		add(v)
	}
	return out
}
