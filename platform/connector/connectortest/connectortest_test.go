package connectortest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// tiny is a connector of two good tools, which each case below breaks in
// one way.
type tiny struct {
	tools    []connector.Tool
	settings func(json.RawMessage) (json.RawMessage, error)
	fields   []connector.CredentialField
}

func (tiny) Kind() string              { return "tiny" }
func (c tiny) Tools() []connector.Tool { return c.tools }
func (c tiny) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	if c.settings != nil {
		return c.settings(raw)
	}
	s, err := connector.DecodeSettings[tinySettings](raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

func (c tiny) APICredentialFields() []connector.CredentialField { return c.fields }
func (tiny) APIAuthorizer(connector.Site, map[string]secrets.Secret) (connector.Authorizer, error) {
	return nil, errors.New("none")
}
func (tiny) VerifyAPICredential(context.Context, connector.Site, *http.Client) (string, error) {
	return "", errors.New("none")
}
func (tiny) SiteRules() connector.SiteRules { return connector.SiteRules{} }

type tinySettings struct {
	Warehouse string `json:"warehouse,omitempty"`
}

func handler(context.Context, *connector.Call) (any, error) { return map[string]any{}, nil }

func preview(context.Context, *connector.Call) (*connector.Preview, error) {
	return &connector.Preview{}, nil
}

const desc = "Lists the widgets of the tiny ERP, newest first, a page at a time; use meta.next_offset for the next page."

func listTool() connector.Tool {
	return connector.Tool{
		Name: "list_widgets", Title: "List widgets", Description: desc,
		Input: schema.Object(connector.PageProps(20, 100)...),
		Output: schema.Object(
			schema.Prop("data", schema.Array(schema.OpenObject(), "The widgets.")).Required(),
			schema.Prop("meta", schema.Object(connector.PageMetaProps("Newest first, then by id.")...)).Required(),
		),
		Effect: connector.Read, Handler: handler,
	}
}

func writeTool() connector.Tool {
	return connector.Tool{
		Name: "rename_widget", Title: "Rename a widget", Description: desc,
		Input:  schema.Object(schema.Prop("widget_id", schema.String("The widget.")).Required(), schema.Prop("name", schema.String("Its new name.")).Required()),
		Output: schema.Object(schema.Prop("name", schema.String("The name now.")).Required()),
		Effect: connector.Write, Idempotent: true, Preview: preview, Handler: handler,
	}
}

func searchTool() connector.Tool {
	return connector.Tool{
		Name: "search", Title: "Search", Description: desc,
		Input: schema.Object(schema.Prop("query", schema.String("Words.")).Required()),
		Output: schema.Object(schema.Prop("results", schema.Array(schema.Object(
			schema.Prop("id", schema.String("Pass to fetch.")).Required(),
			schema.Prop("title", schema.String("What it is.")).Required(),
			schema.Prop("url", schema.String("Its page.")).Required(),
		), "Matches.")).Required()),
		Effect: connector.Read, Handler: handler,
	}
}

// problemsOf runs every check but the snapshots on tools.
func problemsOf(tools []connector.Tool, opts ...Option) []string {
	o := options{argument: LowerSnakeCase}
	for _, opt := range opts {
		opt(&o)
	}
	c := tiny{tools: tools}
	var all []string
	all = append(all, checkCatalogue(c, tools, o)...)
	all = append(all, checkSchemas(c.Kind(), tools)...)
	all = append(all, checkEffects(tools)...)
	all = append(all, checkAnnotations(tools)...)
	all = append(all, checkNaming(tools, o.prefix)...)
	all = append(all, checkSearchFetch(tools)...)
	return all
}

func TestGoodCatalogueHasNoProblems(t *testing.T) {
	if p := problemsOf([]connector.Tool{listTool(), writeTool(), searchTool()}); len(p) > 0 {
		t.Fatalf("problems in a good catalogue: %q", p)
	}
}

// TestEachRuleCatchesItsDefect breaks one rule per case and expects the
// suite to say so, in words naming the tool and the rule.
func TestEachRuleCatchesItsDefect(t *testing.T) {
	for _, c := range []struct {
		name  string
		tools func() []connector.Tool
		opts  []Option
		want  string
	}{
		{"no title", func() []connector.Tool { l := listTool(); l.Title = ""; return []connector.Tool{l} }, nil, "list_widgets: no title"},
		{"short description", func() []connector.Tool { l := listTool(); l.Description = "Lists widgets."; return []connector.Tool{l} }, nil, "full sentences"},
		{"description without full stop", func() []connector.Tool {
			l := listTool()
			l.Description = strings.TrimSuffix(desc, ".")
			return []connector.Tool{l}
		}, nil, "full sentences"},
		{"camel case argument", func() []connector.Tool {
			w := writeTool()
			w.Input = schema.Object(schema.Prop("widgetId", schema.String("The widget.")))
			return []connector.Tool{w}
		}, nil, "argument widgetId is not lower snake case"},
		{"reserved output", func() []connector.Tool {
			w := writeTool()
			w.Output = schema.Object(schema.Prop("status", schema.String("Done.")))
			return []connector.Tool{w}
		}, nil, "output property status"},
		{"list without offset", func() []connector.Tool {
			l := listTool()
			l.Input = schema.Object(schema.Prop("limit", schema.Integer("Rows.")))
			return []connector.Tool{l}
		}, nil, "takes offset"},
		{"schema that does not compile", func() []connector.Tool {
			l := listTool()
			l.Input = schema.Object(schema.Prop("code", schema.String("A code.").Match("([unclosed")))
			return []connector.Tool{l}
		}, nil, "input schema does not compile"},
		{"write without preview", func() []connector.Tool { w := writeTool(); w.Preview = nil; return []connector.Tool{w} }, nil, "a write tool with a preview: false"},
		{"read with preview", func() []connector.Tool { l := listTool(); l.Preview = preview; return []connector.Tool{l} }, nil, "a read tool with a preview: true"},
		{"idempotent destructive", func() []connector.Tool {
			w := writeTool()
			w.Effect = connector.Destructive
			return []connector.Tool{w}
		}, nil, "a destructive tool says it is idempotent"},
		{"bad name", func() []connector.Tool { l := listTool(); l.Name = "ListWidgets"; return []connector.Tool{l} }, nil, `"ListWidgets": a tool name is lower snake case`},
		{"duplicate name", func() []connector.Tool { return []connector.Tool{listTool(), listTool()} }, nil, "list_widgets: two tools have this name"},
		{"missing prefix", func() []connector.Tool { return []connector.Tool{listTool(), searchTool()} }, []Option{WithPrefix("tiny_")}, "list_widgets: tools are named tiny_*"},
		{"prefixed search", func() []connector.Tool { s := searchTool(); s.Name = "tiny_search"; return []connector.Tool{s} }, []Option{WithPrefix("tiny_")}, "ChatGPT looks for the names search and fetch"},
		{"search without query", func() []connector.Tool {
			s := searchTool()
			s.Input = schema.Object(schema.Prop("text", schema.String("Words.")).Required())
			return []connector.Tool{s}
		}, nil, "search input: query must be a required property"},
		{"search results without url", func() []connector.Tool {
			s := searchTool()
			s.Output = schema.Object(schema.Prop("results", schema.Array(schema.Object(
				schema.Prop("id", schema.String("Pass to fetch.")).Required(),
				schema.Prop("title", schema.String("What it is.")).Required(),
			), "Matches.")).Required())
			return []connector.Tool{s}
		}, nil, "search output results item: url must be a required property"},
		{"fetch without text", func() []connector.Tool {
			return []connector.Tool{{
				Name: "fetch", Title: "Fetch", Description: desc,
				Input:  schema.Object(schema.Prop("id", schema.String("An id from search.")).Required()),
				Output: schema.Object(schema.Prop("id", schema.String("The id.")).Required()),
				Effect: connector.Read, Handler: handler,
			}}
		}, nil, "fetch output: text must be a required property"},
		{"own argument rule", func() []connector.Tool { return []connector.Tool{writeTool()} }, []Option{WithArgumentNames(func(_ connector.Tool, name string) error {
			if name == "name" {
				return errors.New("argument name says nothing")
			}
			return nil
		})}, "rename_widget: argument name says nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := problemsOf(c.tools(), c.opts...)
			for _, p := range got {
				if strings.Contains(p, c.want) {
					return
				}
			}
			t.Errorf("problems %q, want one with %q", got, c.want)
		})
	}
}

// TestHintsFollowTheEffect checks, for each effect, and for a local tool,
// what the engine advertises.
func TestHintsFollowTheEffect(t *testing.T) {
	for _, c := range []struct {
		effect                        connector.Effect
		idempotent, overwrites, local bool
		want                          connector.Hints
	}{
		{connector.Read, false, false, false, connector.Hints{ReadOnly: true, Idempotent: true, OpenWorld: true}},
		{connector.Read, false, false, true, connector.Hints{ReadOnly: true, Idempotent: true}},
		{connector.Write, false, false, false, connector.Hints{OpenWorld: true}},
		{connector.Write, true, false, false, connector.Hints{Idempotent: true, OpenWorld: true}},
		{connector.Write, true, true, false, connector.Hints{Idempotent: true, Destructive: true, OpenWorld: true}},
		{connector.Destructive, false, false, false, connector.Hints{Destructive: true, OpenWorld: true}},
	} {
		tool := connector.Tool{Effect: c.effect, Idempotent: c.idempotent, Overwrites: c.overwrites, Local: c.local}
		if got := tool.Hints(); got != c.want {
			t.Errorf("%s (idempotent %v, overwrites %v, local %v): %+v, want %+v", c.effect, c.idempotent, c.overwrites, c.local, got, c.want)
		}
	}
}

// TestSnapshots: a missing, a changed and a stale snapshot each fail;
// -update writes them all and removes the stale one, after which they pass.
func TestSnapshots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "toolsnaps")
	tools := []connector.Tool{listTool(), writeTool()}
	if p := checkSnapshots(tools, dir, false); len(p) == 0 {
		t.Fatal("no snapshot directory, but no problem")
	}
	if p := checkSnapshots(tools, dir, true); len(p) > 0 {
		t.Fatalf("update: %q", p)
	}
	if p := checkSnapshots(tools, dir, false); len(p) > 0 {
		t.Fatalf("after update: %q", p)
	}
	got, err := os.ReadFile(filepath.Join(dir, "list_widgets.snap"))
	if err != nil {
		t.Fatal(err)
	}
	var snap map[string]any
	if err := json.Unmarshal(got, &snap); err != nil || snap["name"] != "list_widgets" || snap["effect"] != "read" || snap["description"] != desc {
		t.Fatalf("snapshot %s: %v", got, err)
	}

	changed := []connector.Tool{listTool(), writeTool()}
	changed[1].Description = desc + " It renames."
	if p := checkSnapshots(changed, dir, false); len(p) != 1 || !strings.Contains(p[0], "rename_widget: the tool differs") {
		t.Errorf("changed description: %q", p)
	}
	if p := checkSnapshots(tools[:1], dir, false); len(p) != 1 || !strings.Contains(p[0], "snapshot rename_widget.snap has no tool") {
		t.Errorf("stale snapshot: %q", p)
	}
	if err := os.Remove(filepath.Join(dir, "list_widgets.snap")); err != nil {
		t.Fatal(err)
	}
	if p := checkSnapshots(tools, dir, false); len(p) != 1 || !strings.Contains(p[0], "list_widgets: no snapshot") {
		t.Errorf("missing snapshot: %q", p)
	}
	if p := checkSnapshots(tools[:1], dir, true); len(p) > 0 {
		t.Fatalf("update: %q", p)
	}
	if _, err := os.Stat(filepath.Join(dir, "rename_widget.snap")); !os.IsNotExist(err) {
		t.Errorf("update kept the stale snapshot: %v", err)
	}
}

// TestRun runs the whole suite on a good catalogue, as a connector does.
func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "toolsnaps")
	tools := []connector.Tool{listTool(), writeTool(), searchTool()}
	if p := checkSnapshots(tools, dir, true); len(p) > 0 {
		t.Fatal(p)
	}
	Run(t, tiny{tools: tools, fields: []connector.CredentialField{{Name: "api_key", Description: "The key.", Secret: true}}}, WithSnapshotDir(dir))
}

func TestValidate(t *testing.T) {
	s := schema.Object(
		schema.Prop("from", schema.Date("First day.")).Required(),
		schema.Prop("limit", schema.Integer("Rows.").Min(1).Max(100)),
	)
	for doc, ok := range map[string]bool{
		`{"from":"2026-01-31"}`:             true,
		`{"from":"2026-01-31","limit":100}`: true,
		`{"from":"2026-02-30"}`:             false, // formats are asserted, as the engine does
		`{"from":"2026-01-31","limit":0}`:   false,
		`{"limit":5}`:                       false,
		`{"from":"2026-01-31","other":1}`:   false,
		`{"from":`:                          false,
	} {
		for range 2 { // the second time from the cache
			if err := Validate(s, []byte(doc)); (err == nil) != ok {
				t.Errorf("Validate(%s) = %v, want valid %v", doc, err, ok)
			}
		}
	}
}

func TestSettings(t *testing.T) {
	if p := checkSettings(tiny{fields: []connector.CredentialField{{Name: "api_key", Description: "The key."}}}); len(p) > 0 {
		t.Fatalf("good connector: %q", p)
	}
	for _, c := range []struct {
		name string
		c    tiny
		want string
	}{
		{"lenient", tiny{settings: func(raw json.RawMessage) (json.RawMessage, error) { return []byte("{}"), nil }}, "want INVALID_ARGUMENT for an unknown setting"},
		{"empty refused", tiny{settings: func(raw json.RawMessage) (json.RawMessage, error) {
			if len(raw) == 0 {
				return nil, errors.New("no settings")
			}
			return raw, nil
		}}, `NormalizeSettings(""): no settings`},
		{"not canonical", tiny{settings: func(raw json.RawMessage) (json.RawMessage, error) {
			if strings.Contains(string(raw), "connectortest") {
				return nil, connectorErr()
			}
			return append([]byte(`{"n":`), append([]byte(strconv.Itoa(len(raw))), '}')...), nil
		}}, "the canonical form must normalise to itself"},
		{"field name", tiny{fields: []connector.CredentialField{{Name: "API Key", Description: "The key."}}}, `connection field "API Key" is not lower snake case`},
		{"field description", tiny{fields: []connector.CredentialField{{Name: "api_key"}}}, "connection field api_key has no description"},
		{"field twice", tiny{fields: []connector.CredentialField{{Name: "api_key", Description: "K."}, {Name: "api_key", Description: "K."}}}, "connection field api_key is listed twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := checkSettings(c.c)
			for _, p := range got {
				if strings.Contains(p, c.want) {
					return
				}
			}
			t.Errorf("problems %q, want one with %q", got, c.want)
		})
	}
}

func connectorErr() error { return toolerr.New(toolerr.InvalidArgument, "unknown setting") }
