package acumaticatest

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestArchivedRecordsNeedTheArchiveHeader: archived records stay out of
// GET lists and GET by key unless the request sends PX-ApiArchive: SHOW
// (api-facts.md §1.2; Acumatica's Postman example "Operate with Archived
// Records" lists archived shipments only with that header).
func TestArchivedRecordsNeedTheArchiveHeader(t *testing.T) {
	cutoff := DefaultNow.AddDate(-1, 0, 0)
	s := newTestServer(t, Options{ArchivedBefore: cutoff})
	tok := passwordToken(t, s, "admin", "api")
	var old, total int
	var oldType, oldNbr string
	for _, inv := range s.Data().Records("Invoice") {
		total++
		if inv.Time("Date").Before(cutoff) {
			old++
			oldType, oldNbr = inv.String("Type"), inv.String("ReferenceNbr")
		}
	}
	if old == 0 || old == total {
		t.Fatalf("%d of %d invoices before %s: the cut-off archives none or all", old, total, cutoff)
	}
	read := func(path string, query url.Values, show bool) (int, []byte) {
		req, _ := http.NewRequest(http.MethodGet, s.entityURL(Version24, path, query), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if show {
			req.Header.Set("PX-ApiArchive", "SHOW")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	sel := url.Values{"$select": {"ReferenceNbr"}}
	if st, b := read("Invoice", sel, false); st != http.StatusOK || len(decodeList(t, b)) != total-old {
		t.Errorf("list without the header: %d, %d rows, want %d", st, len(decodeList(t, b)), total-old)
	}
	if st, b := read("Invoice", sel, true); st != http.StatusOK || len(decodeList(t, b)) != total {
		t.Errorf("list with the header: %d, %d rows, want %d", st, len(decodeList(t, b)), total)
	}
	key := "Invoice/" + url.PathEscape(oldType) + "/" + oldNbr
	if st, b := read(key, nil, false); st != http.StatusInternalServerError {
		t.Errorf("archived invoice by key without the header: %d %s, want 500 No entity", st, b)
	}
	if st, b := read(key, nil, true); st != http.StatusOK || !strings.Contains(string(b), `"ReferenceNbr":{"value":"`+oldNbr+`"}`) {
		t.Errorf("archived invoice by key with the header: %d %s", st, b)
	}
}
