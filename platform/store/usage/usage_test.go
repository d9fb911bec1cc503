package usage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestRedactedFields: a redaction's paths name their fields once each,
// without array positions, sorted, and a long list is cut at a field.
func TestRedactedFields(t *testing.T) {
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{nil, ""},
		{[]string{"data[3].tax_id", "data[12].tax_id", "data[0].bank[1].iban"}, "data[].bank[].iban, data[].tax_id"},
		{[]string{"document.bank_party_account_number"}, "document.bank_party_account_number"},
		{[]string{"rows[0][2]"}, "rows[][]"},
		{[]string{"a2b.c[7]x"}, "a2b.c[]x"},
	} {
		if got := RedactedFields(c.paths); got != c.want {
			t.Errorf("RedactedFields(%q) = %q, want %q", c.paths, got, c.want)
		}
	}
	var many []string
	for i := range 200 {
		many = append(many, "data[0].field_"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strings.Repeat("y", i/26))
	}
	got := RedactedFields(many)
	if len(got) > maxRedactedFields+len(", …") || !strings.HasSuffix(got, ", …") || strings.Contains(got, "[0]") {
		t.Errorf("a long list: %d bytes %q", len(got), got)
	}
	for _, f := range strings.Split(strings.TrimSuffix(got, ", …"), ", ") {
		if !strings.HasPrefix(f, "data[].field_") {
			t.Errorf("a field cut in the middle: %q", f)
		}
	}
}

// TestRecorderStoresRedactions: an event's redactions are stored by the
// batch copy and by the insert that takes its place when a batch is
// written again.
func TestRecorderStoresRedactions(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	r := NewRecorder(pool, zap.NewNop(), Options{FlushInterval: time.Hour, BatchSize: 1000})
	first := event(60)
	first.ID = uuid.Must(uuid.NewV7())
	first.RedactedCount, first.RedactedFields = 3, "data[].tax_id"
	r.Record(first)
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The first event again, as after a lost answer, makes the copy fail
	// and the insert store the second.
	second := event(61)
	second.RedactedCount, second.RedactedFields = 1, "document.iban"
	r.Record(first)
	r.Record(second)
	r.Record(event(62))
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT duration_ms, redacted_count, redacted_fields FROM usage_events ORDER BY duration_ms`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var d, n int
		var f string
		if err := rows.Scan(&d, &n, &f); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %d %s", d, n, f))
	}
	want := []string{"60 3 data[].tax_id", "61 1 document.iban", "62 0 "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("stored %q, want %q", got, want)
	}
}
