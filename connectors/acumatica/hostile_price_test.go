package acumatica

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestSalesOrderPreviewBoundsTheItemsDefaultPrice: the preview of a line
// without a unit price shows an amount from the item's default price, a
// number the ERP sends. A hostile or broken ERP that sends 1e999999 (nine
// bytes) must not have erpgate build, and store as the approval's preview,
// an amount of a million digits: the price is read as every other ERP
// number is (connector.ExactNumber), and a price past its bound gives no
// estimated amount.
func TestSalesOrderPreviewBoundsTheItemsDefaultPrice(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	cust := exemptCustomer(t, h.sim)
	item := h.sim.Data().Records("StockItem")[7]
	price := regexp.MustCompile(`("DefaultPrice":\{"value":)[-0-9.eE+]+`)
	for _, hostile := range []string{"1e999999", "1e-999999"} {
		h.erp = func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.HasSuffix(r.URL.Path, "/StockItem") {
				return false
			}
			rec := httptest.NewRecorder()
			h.sim.ServeHTTP(rec, r)
			body := price.ReplaceAllString(rec.Body.String(), "${1}"+hostile)
			for k, v := range rec.Header() {
				if k != "Content-Length" {
					w.Header()[k] = v
				}
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write([]byte(body))
			return true
		}
		p, err := h.preview(kindFull, "acumatica_create_sales_order", map[string]any{"CustomerID": cust.String("CustomerID"),
			"Details": []any{map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": 3}}})
		if err != nil {
			t.Fatalf("DefaultPrice %s: %v", hostile, err)
		}
		for _, row := range p.Tables[0].Rows {
			for i, cell := range row {
				if len(cell) > 200 {
					t.Errorf("DefaultPrice %s: column %d of the line holds %d characters", hostile, i, len(cell))
				}
			}
		}
		for _, f := range p.Fields {
			if len(f.After) > 200 {
				t.Errorf("DefaultPrice %s: field %s holds %d characters", hostile, f.Name, len(f.After))
			}
		}
	}
}
