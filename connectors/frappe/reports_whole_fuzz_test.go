package frappe

import (
	"encoding/json"
	"os"
	"testing"
)

// FuzzParseReportReadsWholeBodies: a report answer is read only when the
// whole body is one JSON value, as encoding/json says: an answer that
// goes on after its envelope (an error page after the JSON) is not a
// complete report, and its empty result must not read as "no rows".
func FuzzParseReportReadsWholeBodies(f *testing.F) {
	for _, s := range []string{
		string(bigReport(2)),
		`{"message":{"result":[],"columns":["Account:Link/Account:200"]}}`,
		`{"message":{"result":[],"columns":["Account:Link/Account:200"]}}<html><body>Internal Server Error</body></html>`,
		`{"message":{"result":[],"columns":[]}} {"message":{"result":[["a"]],"columns":["A::100"]}}`,
		`{"message":{"result":null,"columns":[]}}` + "\n",
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"20_query_report_general_ledger.json", "21_query_report_prepared.json", "22_query_report_ar_total_row_tail.json"} {
		body, err := os.ReadFile("testdata/samples/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
		f.Add(append(body, "<html>502 Bad Gateway</html>"...))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := parseReport("General Ledger", body); err == nil && !json.Valid(body) {
			t.Fatalf("parseReport read %q, which encoding/json says is not one JSON value", body)
		}
	})
}
