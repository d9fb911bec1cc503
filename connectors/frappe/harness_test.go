package frappe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/connectortest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// The harness calls tool handlers directly against the in-process Frappe
// simulator, as the engine would: arguments are validated against the
// tool's input schema first (with the same JSON Schema library and draft),
// and results are checked against its output schema.

// Demo personas of the simulator.
const (
	allCompanies = "all-companies"
	oneCompany   = "one-company"
	noAccounting = "no-accounting"
)

var (
	simOnce sync.Once
	sim     *frappetest.Server
	factory = outbound.NewFactory(outbound.DefaultOptions())
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sim != nil {
		sim.Close()
	}
	os.Exit(code)
}

// testSim returns the shared simulator (its data never changes).
func testSim(t testing.TB) *frappetest.Server {
	t.Helper()
	simOnce.Do(func() { sim = frappetest.NewServer(frappetest.Options{}) })
	return sim
}

func toolByName(t testing.TB, name string) connector.Tool {
	t.Helper()
	for _, tool := range New().Tools() {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return connector.Tool{}
}

// site is the simulator as a connector.Site.
func site(t testing.TB, settings string) connector.Site {
	t.Helper()
	return siteOf(t, testSim(t), settings)
}

// siteOf is site for simulator s.
func siteOf(t testing.TB, s *frappetest.Server, settings string) connector.Site {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if settings == "" {
		settings = "{}"
	}
	return connector.Site{ID: uuid.New(), Slug: "demo", Kind: Kind, DisplayName: "Demo", BaseURL: u, Settings: json.RawMessage(settings)}
}

// invocation is one tool call made by a test.
type invocation struct {
	role     string
	settings string
	// maxRecords overrides the default of 1000.
	maxRecords int
	// sim is the simulator to call; nil means the shared one.
	sim *frappetest.Server
}

// call runs tool as role with args and returns its result decoded with
// exact numbers, or its error. Arguments that fail the input schema fail
// the test unless the test expects INVALID_ARGUMENT from validation.
func call(t testing.TB, role, tool string, args map[string]any) (map[string]any, error) {
	t.Helper()
	return invocation{role: role}.call(t, tool, args)
}

func (inv invocation) call(t testing.TB, name string, args map[string]any) (map[string]any, error) {
	t.Helper()
	tool := toolByName(t, name)
	raw, err := validArgs(t, tool, args)
	if err != nil {
		return nil, err
	}
	c := inv.newCall(t, raw)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := tool.Handler(ctx, c)
	if err != nil {
		return nil, err
	}
	return checkResult(t, tool, out)
}

// validArgs encodes args and validates them against the tool's input
// schema, as the engine does before a handler runs.
func validArgs(t testing.TB, tool connector.Tool, args map[string]any) (json.RawMessage, error) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	if err := connectortest.Validate(tool.Input, raw); err != nil {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "invalid arguments: %v", err)
	}
	return raw, nil
}

// newCall builds the connector.Call a tool gets for this invocation.
func (inv invocation) newCall(t testing.TB, raw json.RawMessage) *connector.Call {
	t.Helper()
	s := inv.sim
	if s == nil {
		s = testSim(t)
	}
	u := s.User(inv.role)
	if u.APIKey == "" {
		t.Fatalf("no simulator user with role %s", inv.role)
	}
	auth := connector.AuthorizerFunc(func(r *http.Request) error {
		r.Header.Set("Authorization", "token "+u.APIKey+":"+u.APISecret)
		return nil
	})
	st := siteOf(t, s, inv.settings)
	maxRecords := inv.maxRecords
	if maxRecords == 0 {
		maxRecords = 1000
	}
	return &connector.Call{
		Site:       st,
		HTTP:       factory.Client(st, auth),
		Args:       raw,
		Principal:  connector.Principal{AuthType: "service_token", Subject: u.Email},
		MaxRecords: maxRecords,
	}
}

// checkResult checks a handler's result against the tool's output schema
// and returns it decoded with exact numbers.
func checkResult(t testing.TB, tool connector.Tool, out any) (map[string]any, error) {
	t.Helper()
	name := tool.Name
	enc, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("%s: result does not encode: %v", name, err)
	}
	if err := connectortest.Validate(tool.Output, enc); err != nil {
		t.Fatalf("%s: result does not match the output schema: %v\n%s", name, err, firstBytes(enc, 2000))
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(enc))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

func firstBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// mustCall is call for a call that must succeed.
func mustCall(t testing.TB, role, tool string, args map[string]any) map[string]any {
	t.Helper()
	out, err := call(t, role, tool, args)
	if err != nil {
		t.Fatalf("%s %v as %s: %v", tool, args, role, err)
	}
	return out
}

// wantCode asserts that err is a tool error with code.
func wantCode(t testing.TB, err error, code toolerr.Code) *toolerr.Error {
	t.Helper()
	var te *toolerr.Error
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a %s tool error", err, code)
	}
	if te.Code != code {
		t.Fatalf("got %s (%s), want %s", te.Code, te.Message, code)
	}
	return te
}

// walk calls a paged tool with next_offset until the end and returns every
// row, failing on a repeated name.
func walk(t testing.TB, role, tool string, args map[string]any) []map[string]any {
	t.Helper()
	var rows []map[string]any
	seen := map[string]bool{}
	offset := 0
	for page := 0; page < 1000; page++ {
		a := map[string]any{"offset": offset}
		for k, v := range args {
			a[k] = v
		}
		out := mustCall(t, role, tool, a)
		data, _ := out["data"].([]any)
		for _, r := range data {
			row := r.(map[string]any)
			name := row["name"].(string)
			if seen[name] {
				t.Fatalf("%s: %s is on two pages", tool, name)
			}
			seen[name] = true
			rows = append(rows, row)
		}
		meta := out["meta"].(map[string]any)
		if meta["next_offset"] == nil {
			if meta["complete"] != true {
				t.Fatalf("%s: last page not complete: %v", tool, meta)
			}
			return rows
		}
		next := mustInt(t, meta["next_offset"])
		if next <= offset {
			t.Fatalf("%s: next_offset %d does not advance from %d", tool, next, offset)
		}
		offset = next
	}
	t.Fatalf("%s: too many pages", tool)
	return nil
}

func mustInt(t testing.TB, v any) int {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	return int(i)
}

// rat parses a result number exactly.
func rat(t testing.TB, v any) *big.Rat {
	t.Helper()
	r, ok := decimalText(v)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	return r
}

// sumDocs adds up a decimal field over docs.
func sumDocs(docs []*frappetest.Doc, field string) *big.Rat {
	s := new(big.Rat)
	for _, d := range docs {
		s.Add(s, d.Dec(field).Rat())
	}
	return s
}

// docsWhere returns documents of doctype matching keep.
func docsWhere(t testing.TB, doctype string, keep func(d *frappetest.Doc) bool) []*frappetest.Doc {
	t.Helper()
	var out []*frappetest.Doc
	for _, d := range testSim(t).Data().List(doctype) {
		if keep(d) {
			out = append(out, d)
		}
	}
	return out
}

// companies of the simulator.
func companyNames(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, c := range testSim(t).Data().List("Company") {
		out = append(out, c.Name)
	}
	return out
}

// visibleCompany is the company the one-company user may see.
func visibleCompany(t testing.TB) string {
	t.Helper()
	u := testSim(t).User(oneCompany)
	if len(u.Companies) != 1 {
		t.Fatalf("one-company user has companies %v", u.Companies)
	}
	return u.Companies[0]
}

// otherCompany is a company the one-company user may not see.
func otherCompany(t testing.TB) string {
	t.Helper()
	for _, c := range companyNames(t) {
		if c != visibleCompany(t) {
			return c
		}
	}
	t.Fatal("no second company")
	return ""
}

func ratEq(a, b *big.Rat) bool { return a.Cmp(b) == 0 }

func contains(haystack, needle string) bool {
	return strings.Contains(strings.ToLower(haystack), strings.ToLower(needle))
}
