package acumatica

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
)

// readSample is a recorded or documented Acumatica answer, verbatim
// (testdata/samples, each with its .meta.json).
func readSample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The inquiry samples, served verbatim in place of the simulator's rows:
// the plain shape (JSON numbers, nulls) and the documented parameterised
// shape ("odata.metadata", CHAR padding, decimals as strings).
func TestRunInquiryOnTheDocumentedAnswers(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.mustRun(kindFull, "acumatica_list_generic_inquiries", nil) // the metadata comes from the simulator
	h.sim.SetFault(acumaticatest.Fault{PathPrefix: "/t/Demo/api/odata/gi/Customer Contacts", Status: 200, Body: readSample(t, "odata-gi-customer-contacts-200.json")})
	out := h.mustRun(kindFull, "acumatica_run_inquiry", map[string]any{"name": "Customer Contacts"})
	rows := out["results"].([]any)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	row := rows[0].(map[string]any)
	if row["CustomerID"] != "C000000001" || row["State"] != nil || row["ContactID"] != json.Number("5764") {
		t.Errorf("row %v", row)
	}

	h.sim.SetFault(acumaticatest.Fault{PathPrefix: "/t/Demo/api/odata/gi/ItemAvailabilityData_WithParameters", Status: 200, Body: readSample(t, "odata-gi-with-parameters-200.json")})
	out = h.mustRun(kindFull, "acumatica_run_inquiry", map[string]any{"name": "Item Availability Data", "parameters": map[string]string{"InventoryID": "AALEGO500"}})
	rows = out["results"].([]any)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	row = rows[0].(map[string]any)
	if row["InventoryID"] != "AALEGO500" || row["Warehouse"] != "MAIN" || row["QtyOnHand"] != json.Number("1999.000000") || row["Subitem"] != "0" {
		t.Errorf("row %v", row)
	}
}

// The documented sign-in answers (token, userinfo), the endpoint list and
// the inquiries' service document, served verbatim.
func TestSignInAndPreflightOnTheDocumentedAnswers(t *testing.T) {
	bodies := map[string]string{
		"/identity/connect/token":    readSample(t, "oauth-token-200.json"),
		"/identity/connect/userinfo": readSample(t, "oauth-userinfo-200.json"),
		"/entity":                    readSample(t, "entity-root-version-and-endpoints-200.json"),
		"/t/Demo/api/odata/gi":       readSample(t, "odata-gi-service-document-200.json"),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(b))
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	ctx := context.Background()
	conn := New(Options{})
	for _, settings := range []string{
		`{"tenant":"Demo","canary_gi":"DB-StorageDetails"}`,
		`{"tenant":"Demo","canary_gi":"DB-StorageDetails","endpoint_version":"25.200.001"}`,
	} {
		norm, err := conn.NormalizeSettings(json.RawMessage(settings))
		if err != nil {
			t.Fatal(err)
		}
		site := connector.Site{Kind: Kind, BaseURL: base, Settings: norm}
		set := siteSettings(site)
		if got := checkEndpoint(ctx, site, set, connector.PreflightInput{HTTP: srv.Client()}); got.Status != connector.CheckPass {
			t.Errorf("%s: endpoint check %+v", settings, got)
		}
		if got := checkCanaryExposed(ctx, site, set, srv.Client()); got.Status != connector.CheckPass {
			t.Errorf("%s: canary check %+v", settings, got)
		}
	}

	site := connector.Site{Kind: Kind, BaseURL: base}
	tok, err := OAuth{}.ExchangeCode(ctx, site, connector.OAuthClient{ID: "88358B02-A48D-A50E-F710-39C1636C30F6@MyTenant", Secret: "s"},
		srv.Client(), "code", "https://localhost/clientapp/", "verifier")
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken.Reveal() != "u39uoZj9A4fj2T80Zx0Qirznr0oqNb1qK92c48ZdxUg" || tok.ExpiresIn.Seconds() != 3600 || tok.Scope != "api offline_access" {
		t.Errorf("token %+v", tok)
	}
	who, err := OAuth{}.Identify(ctx, site, srv.Client())
	if err != nil || who.ID != "gibbs@U100" || who.DisplayName != "Kimberly Gibbs" {
		t.Errorf("Identify = %+v, %v", who, err)
	}
}

// Older builds answer GET /entity with a bare array of the endpoint rows,
// not the wrapper object (entity-root-version-and-endpoints-200.meta.json).
// Both shapes name the same endpoints; the endpoint check and the
// explanation of a 404 read either.
func TestEndpointListAsBareArray(t *testing.T) {
	var root struct {
		Endpoints json.RawMessage `json:"endpoints"`
	}
	if err := json.Unmarshal([]byte(readSample(t, "entity-root-version-and-endpoints-200.json")), &root); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/entity" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(root.Endpoints)
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	conn := New(Options{})
	for settings, want := range map[string]connector.CheckStatus{
		`{"tenant":"Demo","endpoint_version":"25.200.001"}`: connector.CheckPass,
		`{"tenant":"Demo","endpoint_version":"24.200.001"}`: connector.CheckPass,
	} {
		norm, err := conn.NormalizeSettings(json.RawMessage(settings))
		if err != nil {
			t.Fatal(err)
		}
		site := connector.Site{Kind: Kind, BaseURL: base, Settings: norm}
		if got := checkEndpoint(context.Background(), site, siteSettings(site), connector.PreflightInput{HTTP: srv.Client()}); got.Status != want {
			t.Errorf("%s: endpoint check %+v", settings, got)
		}
	}
	offered, ok := parseEndpointList([]byte(root.Endpoints))
	if !ok || len(offered.endpoints) == 0 || offered.build != "" {
		t.Fatalf("bare array: %+v, %v", offered, ok)
	}
	wrapped, ok := parseEndpointList([]byte(readSample(t, "entity-root-version-and-endpoints-200.json")))
	if !ok || wrapped.build != "25.093.0036" || !slices.Equal(wrapped.endpoints, offered.endpoints) {
		t.Errorf("wrapper %+v, bare %+v", wrapped, offered)
	}
}
