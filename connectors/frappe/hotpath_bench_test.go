package frappe

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/rawjson"
)

// cannedTransport answers every request with one recorded body, so a
// benchmark measures the connector, not the simulator or the network.
type cannedTransport struct{ body []byte }

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode:    200,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(c.body)),
		ContentLength: int64(len(c.body)),
		Request:       r,
	}, nil
}

// BenchmarkListCustomersHandler is list_customers' handler and the
// encoding of its result, on a recorded 20-row page.
func BenchmarkListCustomersHandler(b *testing.B) {
	tool := toolByName(b, "list_customers")
	st := site(b, "")
	recorded, raw := recordListPage(b)
	call := &connector.Call{Site: st, HTTP: &http.Client{Transport: cannedTransport{recorded}}, Args: raw, MaxRecords: 1000}
	b.ReportAllocs()
	b.SetBytes(int64(len(recorded)))
	for b.Loop() {
		out, err := tool.Handler(context.Background(), call)
		if err != nil {
			b.Fatal(err)
		}
		// Encoded as the engine does it.
		if r, ok := out.(connector.RawResult); ok {
			if err := rawjson.Check(r); err != nil {
				b.Fatal(err)
			}
		} else if _, err := json.Marshal(out); err != nil {
			b.Fatal(err)
		}
	}
}

type recordingTransport struct {
	next http.RoundTripper
	body *[]byte
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	*r.body = b
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

func simAuth(t testing.TB, role string) connector.Authorizer {
	u := testSim(t).User(role)
	return connector.AuthorizerFunc(func(r *http.Request) error {
		r.Header.Set("Authorization", "token "+u.APIKey+":"+u.APISecret)
		return nil
	})
}

// BenchmarkSplitRows is the reading of a recorded 20-row list page: the
// check of the whole body and the finding of its rows.
func BenchmarkSplitRows(b *testing.B) {
	recorded, _ := recordListPage(b)
	b.SetBytes(int64(len(recorded)))
	for b.Loop() {
		rows, err := splitRows(recorded, "Customer")
		if err != nil || len(rows) != 21 { // the tool asks for one more row than it shows
			b.Fatal(len(rows), err)
		}
	}
}

// recordListPage runs list_customers once against the simulator, with a
// limit of 20, and returns the page the simulator answered and the tool's
// arguments.
func recordListPage(b *testing.B) (page, args []byte) {
	b.Helper()
	rec := &recordingTransport{next: factory.Client(site(b, ""), simAuth(b, allCompanies)).Transport, body: &page}
	args, _ = json.Marshal(map[string]any{"limit": 20})
	if _, err := toolByName(b, "list_customers").Handler(context.Background(), &connector.Call{Site: site(b, ""), HTTP: &http.Client{Transport: rec}, Args: args, MaxRecords: 1000}); err != nil {
		b.Fatal(err)
	}
	return page, args
}
