// Package connectortest is the conformance suite every connector runs from
// its own tests:
//
//	func TestCatalogue(t *testing.T) { connectortest.Run(t, frappe.New()) }
//
// (named TestCatalogue in every connector, so `go test ./connectors/...
// -run Catalogue` checks every catalogue). Run checks the catalogue as the engine will serve it, as subtests:
//
//	snapshots    a golden file per tool, testdata/toolsnaps/<tool>.snap: name, title,
//	             description, effect and schemas; -update rewrites them
//	catalogue    connector.ValidateCatalogue and the registry accept it; titles;
//	             descriptions are full sentences (80 characters or more); argument
//	             names (WithArgumentNames; lower snake case by default); no output
//	             member the error envelope uses; a paged list ("data") takes offset
//	schemas      every input and output schema compiles with the engine's validator
//	effects      a preview exactly for writes; only a Write tool claims idempotency
//	annotations  the hints the engine advertises follow from the effect
//	naming       the naming rule (below)
//	search_fetch search and fetch, when present, have the shape ChatGPT expects
//	settings     empty settings normalise, normalising twice changes nothing, an
//	             unknown setting is INVALID_ARGUMENT (connector.DecodeSettings does
//	             this); the connection's fields are lower snake case and described
//
// The naming rule: a tool name is lower snake case, at most 64 characters,
// unique in the catalogue. Each site is its own MCP server, so names need
// not be unique across kinds; a connector may still give its tools a prefix
// (WithPrefix("acumatica_")), and then every tool carries it except
// ChatGPT's search and fetch, whose names are fixed.
package connectortest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

var update = flag.Bool("update", false, "rewrite the golden tool snapshots (connectortest)")

// Option adjusts Run to a connector's own rules.
type Option func(*options)

type options struct {
	snapshotDir string
	prefix      string
	argument    func(tool connector.Tool, name string) error
}

// WithSnapshotDir keeps the golden files in dir (default testdata/toolsnaps,
// relative to the test's package directory).
func WithSnapshotDir(dir string) Option { return func(o *options) { o.snapshotDir = dir } }

// WithPrefix requires every tool name but search and fetch to start with
// prefix ("acumatica_").
func WithPrefix(prefix string) Option { return func(o *options) { o.prefix = prefix } }

// WithArgumentNames replaces the rule for argument names, by default lower
// snake case. check returns why name is not a good argument name for tool,
// or nil. Acumatica, for one, names options in lowerCamelCase and the
// fields a write sets as Acumatica does.
func WithArgumentNames(check func(tool connector.Tool, name string) error) Option {
	return func(o *options) { o.argument = check }
}

var (
	lowerSnake = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	toolName   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// minDescSize is the shortest description that can tell a model when to
// use a tool and how to read its result.
const minDescSize = 80

// reservedOutput are the members of the error envelope the engine adds to
// every output schema (mcpengine.AdvertisedOutputSchema).
var reservedOutput = []string{"ok", "status", "error"}

// LowerSnakeCase is the default argument rule: lower snake case.
func LowerSnakeCase(_ connector.Tool, name string) error {
	if !lowerSnake.MatchString(name) {
		return fmt.Errorf("argument %s is not lower snake case", name)
	}
	return nil
}

// Run runs the conformance suite on c's catalogue. Call it from a test of
// the connector's own package, so that the snapshots live beside it.
func Run(t *testing.T, c connector.Connector, opts ...Option) {
	t.Helper()
	o := options{snapshotDir: filepath.Join("testdata", "toolsnaps"), argument: LowerSnakeCase}
	for _, opt := range opts {
		opt(&o)
	}
	tools := c.Tools()
	if len(tools) == 0 {
		t.Fatalf("%s: the catalogue has no tools", c.Kind())
	}
	for _, check := range []struct {
		name string
		run  func() []string
	}{
		{"snapshots", func() []string { return checkSnapshots(tools, o.snapshotDir, *update) }},
		{"catalogue", func() []string { return checkCatalogue(c, tools, o) }},
		{"schemas", func() []string { return checkSchemas(c.Kind(), tools) }},
		{"effects", func() []string { return checkEffects(tools) }},
		{"annotations", func() []string { return checkAnnotations(tools) }},
		{"naming", func() []string { return checkNaming(tools, o.prefix) }},
		{"search_fetch", func() []string { return checkSearchFetch(tools) }},
		{"settings", func() []string { return checkSettings(c) }},
	} {
		t.Run(check.name, func(t *testing.T) {
			for _, p := range check.run() {
				t.Error(p)
			}
		})
	}
}

// problems collects what a check found, as sentences.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// Snapshot is the golden text of a tool: what a model sees of it, so that
// any change to that contract shows up in review.
func Snapshot(tool connector.Tool) ([]byte, error) {
	snap := map[string]any{
		"name":         tool.Name,
		"title":        tool.Title,
		"description":  tool.Description,
		"effect":       tool.Effect.String(),
		"inputSchema":  tool.Input,
		"outputSchema": tool.Output,
	}
	if tool.Local {
		// Advertised with openWorldHint false.
		snap["local"] = true
	}
	if tool.Overwrites {
		// Advertised with destructiveHint true.
		snap["overwrites"] = true
	}
	b, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func checkSnapshots(tools []connector.Tool, dir string, update bool) []string {
	var p problems
	want := map[string]bool{}
	for _, tool := range tools {
		want[tool.Name+".snap"] = true
		got, err := Snapshot(tool)
		if err != nil {
			p.add("%s: %v", tool.Name, err)
			continue
		}
		path := filepath.Join(dir, tool.Name+".snap")
		if update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				p.add("%v", err)
			} else if err := os.WriteFile(path, got, 0o644); err != nil {
				p.add("%v", err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			p.add("%s: no snapshot (run the test with -update to write it): %v", tool.Name, err)
			continue
		}
		if !bytes.Equal(old, got) {
			p.add("%s: the tool differs from %s (run the test with -update if the change is intended)", tool.Name, path)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !update {
		p.add("the snapshots: %v", err)
	}
	for _, e := range entries {
		if !want[e.Name()] {
			if update && strings.HasSuffix(e.Name(), ".snap") {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					p.add("%v", err)
				}
				continue
			}
			p.add("snapshot %s has no tool; delete it (or run with -update)", e.Name())
		}
	}
	return p
}

func checkCatalogue(c connector.Connector, tools []connector.Tool, o options) []string {
	var p problems
	if err := connector.ValidateCatalogue(tools); err != nil {
		p.add("%v", err)
	}
	if err := connector.NewRegistry().Register(c); err != nil {
		p.add("the registry refuses the connector: %v", err)
	}
	for _, tool := range tools {
		if tool.Input == nil || tool.Output == nil {
			continue // ValidateCatalogue said so
		}
		if strings.TrimSpace(tool.Title) == "" {
			p.add("%s: no title", tool.Name)
		}
		if d := strings.TrimSpace(tool.Description); !strings.HasSuffix(d, ".") || len(d) < minDescSize {
			p.add("%s: the description should be full sentences (at least %d characters, ending with a full stop) telling a model when to use the tool", tool.Name, minDescSize)
		}
		for _, name := range sortedKeys(tool.Input.Properties) {
			if err := o.argument(tool, name); err != nil {
				p.add("%s: %v", tool.Name, err)
			}
		}
		for _, reserved := range reservedOutput {
			if _, clash := tool.Output.Properties[reserved]; clash {
				p.add("%s: output property %s belongs to the engine's error envelope", tool.Name, reserved)
			}
		}
		if _, pages := tool.Output.Properties["data"]; pages {
			if _, ok := tool.Input.Properties["offset"]; !ok {
				p.add("%s: a list tool (its result has data) takes offset", tool.Name)
			}
		}
	}
	return p
}

func checkSchemas(kind string, tools []connector.Tool) []string {
	var p problems
	for _, tool := range tools {
		for part, s := range map[string]*schema.Schema{"input": tool.Input, "output": tool.Output} {
			if s == nil {
				p.add("%s: no %s schema", tool.Name, part)
				continue
			}
			url := "erpgate:///" + kind + "/" + tool.Name + "/" + part + ".json"
			if _, err := schema.CompileValidator(s, url); err != nil {
				p.add("%s: the %s schema does not compile: %v", tool.Name, part, err)
			}
		}
	}
	return p
}

func checkEffects(tools []connector.Tool) []string {
	var p problems
	for _, tool := range tools {
		switch tool.Effect {
		case connector.Read, connector.Write, connector.Destructive:
		default:
			p.add("%s: effect %s is not read, write or destructive", tool.Name, tool.Effect)
			continue
		}
		if read := tool.Effect == connector.Read; read != (tool.Preview == nil) {
			p.add("%s: a %s tool with a preview: %v (writes need one for their approval; reads have none)", tool.Name, tool.Effect, tool.Preview != nil)
		}
		if tool.Idempotent && tool.Effect != connector.Write {
			p.add("%s: a %s tool says it is idempotent; only write tools say so", tool.Name, tool.Effect)
		}
		if tool.Handler == nil {
			p.add("%s: no handler", tool.Name)
		}
	}
	return p
}

func checkAnnotations(tools []connector.Tool) []string {
	var p problems
	for _, tool := range tools {
		h := tool.Hints()
		var want connector.Hints
		switch tool.Effect {
		case connector.Read:
			want = connector.Hints{ReadOnly: true, Idempotent: true}
		case connector.Write:
			want = connector.Hints{Idempotent: tool.Idempotent, Destructive: tool.Overwrites}
		case connector.Destructive:
			want = connector.Hints{Destructive: true}
		}
		// Open-world: it reaches the ERP, unless it is local.
		want.OpenWorld = !tool.Local
		if h != want {
			p.add("%s: a %s tool (idempotent %v, overwrites %v, local %v) is advertised with %+v, want %+v", tool.Name, tool.Effect, tool.Idempotent, tool.Overwrites, tool.Local, h, want)
		}
	}
	return p
}

func checkNaming(tools []connector.Tool, prefix string) []string {
	var p problems
	seen := map[string]bool{}
	for _, tool := range tools {
		if !toolName.MatchString(tool.Name) {
			p.add("%q: a tool name is lower snake case, at most 64 characters", tool.Name)
		}
		if seen[tool.Name] {
			p.add("%s: two tools have this name", tool.Name)
		}
		seen[tool.Name] = true
		if prefix != "" && !strings.HasPrefix(tool.Name, prefix) && tool.Name != "search" && tool.Name != "fetch" {
			p.add("%s: tools are named %s*, except ChatGPT's search and fetch", tool.Name, prefix)
		}
		if prefix != "" && (tool.Name == prefix+"search" || tool.Name == prefix+"fetch") {
			p.add("%s: ChatGPT looks for the names search and fetch themselves", tool.Name)
		}
	}
	return p
}

// checkSearchFetch holds search and fetch to the shape ChatGPT's connectors
// call: search takes a query and returns results of id, title and url;
// fetch takes one of those ids and returns id, title, text, url and
// metadata.
func checkSearchFetch(tools []connector.Tool) []string {
	var p problems
	for _, tool := range tools {
		if tool.Input == nil || tool.Output == nil {
			continue // the catalogue check says so
		}
		switch tool.Name {
		case "search":
			p.requireProps(tool.Name+" input", tool.Input, "query")
			p.requireType(tool.Name+" input query", tool.Input.Properties["query"], "string")
			p.requireProps(tool.Name+" output", tool.Output, "results")
			results := tool.Output.Properties["results"]
			p.requireType(tool.Name+" output results", results, "array")
			if results != nil && results.Items != nil {
				p.requireProps(tool.Name+" output results item", results.Items, "id", "title", "url")
			} else {
				p.add("search: results has no item schema")
			}
		case "fetch":
			p.requireProps(tool.Name+" input", tool.Input, "id")
			p.requireType(tool.Name+" input id", tool.Input.Properties["id"], "string")
			p.requireProps(tool.Name+" output", tool.Output, "id", "title", "text", "url", "metadata")
		}
	}
	return p
}

func (p *problems) requireProps(what string, s *schema.Schema, names ...string) {
	if s == nil {
		p.add("%s: no schema", what)
		return
	}
	for _, n := range names {
		if _, ok := s.Properties[n]; !ok || !slices.Contains(s.Required, n) {
			p.add("%s: %s must be a required property", what, n)
		}
	}
}

func (p *problems) requireType(what string, s *schema.Schema, typ string) {
	if s == nil || s.Type != typ {
		p.add("%s: must be of type %s", what, typ)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkSettings holds NormalizeSettings to its contract: defaults for no
// settings, a canonical form that normalises to itself, and a refusal of
// what it does not know; and APICredentialFields to names an operator can
// type and descriptions that say what goes in.
func checkSettings(c connector.Connector) []string {
	var p problems
	for _, empty := range []string{"", "null", "{}"} {
		norm, err := c.NormalizeSettings(json.RawMessage(empty))
		if err != nil {
			p.add("NormalizeSettings(%q): %v; no settings must mean the defaults", empty, err)
			continue
		}
		if !json.Valid(norm) || !bytes.HasPrefix(bytes.TrimSpace(norm), []byte("{")) {
			p.add("NormalizeSettings(%q) = %s, not a JSON object", empty, norm)
			continue
		}
		again, err := c.NormalizeSettings(norm)
		if err != nil || !bytes.Equal(again, norm) {
			p.add("NormalizeSettings(%s) = %s, %v; the canonical form must normalise to itself", norm, again, err)
		}
		_ = c.SiteRules().IdentityOf(norm)
	}
	const unknown = `{"connectortest_no_such_setting":true}`
	if _, err := c.NormalizeSettings(json.RawMessage(unknown)); err == nil || toolerr.Classify(err).Code != toolerr.InvalidArgument {
		p.add("NormalizeSettings(%s) = %v, want INVALID_ARGUMENT for an unknown setting", unknown, err)
	}
	seen := map[string]bool{}
	for _, f := range c.APICredentialFields() {
		if !lowerSnake.MatchString(f.Name) {
			p.add("connection field %q is not lower snake case", f.Name)
		}
		if seen[f.Name] {
			p.add("connection field %s is listed twice", f.Name)
		}
		seen[f.Name] = true
		if strings.TrimSpace(f.Description) == "" {
			p.add("connection field %s has no description", f.Name)
		}
	}
	return p
}
