package erpmeta

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func newSite(t testing.TB, pool *pgxpool.Pool) uuid.UUID {
	t.Helper()
	id := uuid.New()
	_, err := pool.Exec(context.Background(),
		`INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, $2, 'acumatica', $3, 'Test')`,
		id, "s"+id.String()[:8], "https://"+id.String()[:8]+".example")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestCacheIsPerSiteAndExpires(t *testing.T) {
	pool := pgtest.NewPool(t)
	a, b := newSite(t, pool), newSite(t, pool)
	s := New(pool)
	ctx := context.Background()
	ca, cb := s.Cache(a), s.Cache(b)

	if _, ok, err := ca.Get(ctx, "openapi"); err != nil || ok {
		t.Fatalf("empty cache: ok=%v err=%v", ok, err)
	}
	if err := ca.Set(ctx, "openapi", []byte(`{"v":1}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := ca.Set(ctx, "openapi", []byte(`{"v":2}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	got, ok, err := ca.Get(ctx, "openapi")
	if err != nil || !ok || string(got) != `{"v":2}` {
		t.Fatalf("Get = %s %v %v, want the replaced value", got, ok, err)
	}
	if _, ok, _ := cb.Get(ctx, "openapi"); ok {
		t.Fatal("site B sees site A's entry")
	}

	// Expire the entry as time would.
	if _, err := pool.Exec(ctx, `UPDATE site_cache SET expires_at = now() - interval '1 second' WHERE site_id = $1`, a); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ca.Get(ctx, "openapi"); ok {
		t.Fatal("an expired entry is still served")
	}
	// The next write of the site purges expired rows.
	if err := ca.Set(ctx, "gi", []byte("x"), time.Hour); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM site_cache WHERE site_id = $1`, a).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("rows after purge = %d, want 1", rows)
	}
}

func TestCacheClearCountsLiveEntriesOfOneSite(t *testing.T) {
	pool := pgtest.NewPool(t)
	a, b := newSite(t, pool), newSite(t, pool)
	s := New(pool)
	ctx := context.Background()
	for _, k := range []string{"k1", "k2", "k3"} {
		if err := s.Cache(a).Set(ctx, k, []byte(k), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Cache(b).Set(ctx, "k1", []byte("b"), time.Hour); err != nil {
		t.Fatal(err)
	}
	n, err := s.Cache(a).Clear(ctx)
	if err != nil || n != 3 {
		t.Fatalf("Clear = %d, %v; want 3", n, err)
	}
	if _, ok, _ := s.Cache(b).Get(ctx, "k1"); !ok {
		t.Fatal("clearing site A removed site B's entry")
	}
	if err := s.Cache(a).Set(ctx, "", nil, time.Hour); err == nil {
		t.Error("an empty key was accepted")
	}
	if err := s.Cache(a).Set(ctx, "k", nil, 0); err == nil {
		t.Error("a zero ttl was accepted")
	}
}

func docs() []connector.IndexDocument {
	return []connector.IndexDocument{
		{Kind: "entity", Name: "Invoice", Title: "Invoices and Memos (AR301000)", Keywords: "Invoice AR301000",
			Body: "Customer Balance Amount DueDate Status", Data: json.RawMessage(`{"screen":"AR301000"}`)},
		{Kind: "entity", Name: "Customer", Title: "Customers (AR303000)", Keywords: "Customer AR303000",
			Body: "CustomerName CreditLimit Email"},
		{Kind: "field", Name: "Customer.CreditLimit", Title: "Credit Limit", Keywords: "Customer CreditLimit Credit Limit", Body: "Decimal"},
		{Kind: "field", Name: "Invoice.Balance", Title: "Balance", Keywords: "Invoice Balance", Body: "Decimal open amount"},
		{Kind: "inquiry", Name: "AR-OpenInvoices", Title: "AR-OpenInvoices", Keywords: "AR Open Invoices", Body: "Customer Balance DueDate"},
		{Kind: "field", Name: "Under_score%", Title: "Odd", Keywords: "odd"},
	}
}

func TestIndexSearchRanksAllWordsFirstWithStemming(t *testing.T) {
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	x := New(pool).SchemaIndex(site)
	ctx := context.Background()
	if st, err := x.Status(ctx); err != nil || st.Built {
		t.Fatalf("status before build = %+v, %v", st, err)
	}
	if err := x.Replace(ctx, "Default/24.200.001", docs(), time.Hour); err != nil {
		t.Fatal(err)
	}
	st, err := x.Status(ctx)
	if err != nil || !st.Built || st.Version != "Default/24.200.001" || st.Documents != 6 {
		t.Fatalf("status = %+v, %v", st, err)
	}

	// "invoices" stems to the same word as "Invoice"; both words appear
	// only in Invoice.Balance and the inquiry.
	hits, err := x.Search(ctx, "invoices balance", nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) < 3 {
		t.Fatalf("hits = %+v", hits)
	}
	for i, h := range hits {
		wantAll := h.Document.Name == "Invoice.Balance" || h.Document.Name == "AR-OpenInvoices" || h.Document.Name == "Invoice"
		if h.AllTerms != wantAll {
			t.Errorf("hit %d %s: AllTerms = %v", i, h.Document.Name, h.AllTerms)
		}
		if i > 0 && hits[i-1].AllTerms == false && h.AllTerms {
			t.Errorf("a partial match ranks above a full one: %+v", hits)
		}
	}

	// Prefix matching and the kinds filter.
	hits, err = x.Search(ctx, "cred", []string{"field"}, 10)
	if err != nil || len(hits) != 1 || hits[0].Document.Name != "Customer.CreditLimit" {
		t.Fatalf("prefix search = %+v, %v", hits, err)
	}
	// Identifiers are split: "CreditLimit" finds the field too.
	if hits, _ := x.Search(ctx, "CreditLimit", nil, 10); len(hits) == 0 || hits[0].Document.Name != "Customer.CreditLimit" {
		t.Fatalf("identifier search = %+v", hits)
	}
	// Punctuation is not a query language; stop words alone match nothing.
	if _, err := x.Search(ctx, `')) OR 1=1 -- & | !`, nil, 10); err != nil {
		t.Fatalf("punctuation: %v", err)
	}
	if hits, err := x.Search(ctx, "the", nil, 10); err != nil || len(hits) != 0 {
		t.Fatalf("stop word = %+v, %v", hits, err)
	}
}

func TestIndexDocumentsAndReplace(t *testing.T) {
	pool := pgtest.NewPool(t)
	a, b := newSite(t, pool), newSite(t, pool)
	s := New(pool)
	x := s.SchemaIndex(a)
	ctx := context.Background()
	if err := x.Replace(ctx, "v1", docs(), time.Hour); err != nil {
		t.Fatal(err)
	}
	d, ok, err := x.Document(ctx, "entity", "invoice")
	if err != nil || !ok || d.Name != "Invoice" || d.Title != "Invoices and Memos (AR301000)" {
		t.Fatalf("Document = %+v %v %v", d, ok, err)
	}
	var data map[string]string
	if err := json.Unmarshal(d.Data, &data); err != nil || data["screen"] != "AR301000" {
		t.Fatalf("data = %s", d.Data)
	}
	if _, ok, _ := s.SchemaIndex(b).Document(ctx, "entity", "Invoice"); ok {
		t.Fatal("site B sees site A's index")
	}
	// A NUL, which Postgres text cannot hold, is dropped from a name as it
	// is from the stored names, rather than failing the query.
	if d, ok, err := x.Document(ctx, "entity", "Invoice\x00"); err != nil || !ok || d.Name != "Invoice" {
		t.Fatalf("Document with a NUL = %+v %v %v", d, ok, err)
	}
	list, err := x.Documents(ctx, "field", "", 10)
	if err != nil || len(list) != 3 || list[0].Name != "Customer.CreditLimit" {
		t.Fatalf("Documents = %+v, %v", list, err)
	}
	// % and _ in a prefix are literal.
	list, _ = x.Documents(ctx, "field", "under_", 10)
	if len(list) != 1 {
		t.Fatalf("literal prefix = %+v", list)
	}
	list, _ = x.Documents(ctx, "field", "u%", 10)
	if len(list) != 0 {
		t.Fatalf("%% matched as a wildcard: %+v", list)
	}

	// Replace drops what the new build lacks.
	if err := x.Replace(ctx, "v2", docs()[:1], time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := x.Document(ctx, "entity", "Customer"); ok {
		t.Fatal("a document of the old build survived Replace")
	}
	dup := []connector.IndexDocument{{Kind: "entity", Name: "A"}, {Kind: "entity", Name: "A"}}
	if err := x.Replace(ctx, "v3", dup, time.Hour); err == nil {
		t.Fatal("duplicates were accepted")
	}
	if st, _ := x.Status(ctx); st.Version != "v2" {
		t.Fatalf("a failed Replace changed the index: %+v", st)
	}

	if _, err := pool.Exec(ctx, `UPDATE schema_index_builds SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if st, _ := x.Status(ctx); st.Built {
		t.Fatal("an expired index reports Built")
	}
	if err := x.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := x.Status(ctx); st.Version != "" {
		t.Fatalf("status after Clear = %+v", st)
	}
}

// Two replicas rebuilding one site's index at once must leave one whole
// build, never a mix.
func TestConcurrentReplaceLeavesOneBuild(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	pools := make([]*pgxpool.Pool, 2)
	for i := range pools {
		p, err := pgxpool.New(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		pools[i] = p
	}
	site := newSite(t, pools[0])
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ds []connector.IndexDocument
			for j := range 50 {
				ds = append(ds, connector.IndexDocument{Kind: "field", Name: fmt.Sprintf("E.F%d", j), Keywords: fmt.Sprintf("build%d", i)})
			}
			if err := New(pools[i%2]).SchemaIndex(site).Replace(ctx, fmt.Sprintf("build%d", i), ds, time.Hour); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	st, err := New(pools[0]).SchemaIndex(site).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n, builds int
	if err := pools[0].QueryRow(ctx, `SELECT count(*), count(DISTINCT keywords) FROM schema_index WHERE site_id = $1`, site).Scan(&n, &builds); err != nil {
		t.Fatal(err)
	}
	if n != 50 || builds != 1 {
		t.Fatalf("rows = %d from %d builds, want 50 from 1", n, builds)
	}
	var kw string
	_ = pools[0].QueryRow(ctx, `SELECT keywords FROM schema_index WHERE site_id = $1 LIMIT 1`, site).Scan(&kw)
	if kw != st.Version {
		t.Fatalf("rows of %s under status %s", kw, st.Version)
	}
}

// FuzzIndexSearch: any text a caller searches the schema index with, and
// any prefix it lists documents by, is answered (possibly with nothing),
// never refused by PostgreSQL: the query words reach to_tsquery and LIKE
// as literal words.
func FuzzIndexSearch(f *testing.F) {
	for _, seed := range []string{"invoices balance", "cred", "CreditLimit", `')) OR 1=1 -- & | !`, "the", "İstanbul", "ǅemal", "e\u0301te", "１２ Ⅻ", "a:*b", "\\%_", "日本語の請求書", "\x00x"} {
		f.Add(seed)
	}
	pool := pgtest.NewPool(f)
	site := newSite(f, pool)
	x := New(pool).SchemaIndex(site)
	ctx := context.Background()
	if err := x.Replace(ctx, "Default/24.200.001", docs(), time.Hour); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, query string) {
		hits, err := x.Search(ctx, query, nil, 10)
		if err != nil || len(hits) > 10 {
			t.Fatalf("Search(%q) = %d hits, %v", query, len(hits), err)
		}
		if _, err := x.Documents(ctx, "field", query, 10); err != nil {
			t.Fatalf("Documents(%q): %v", query, err)
		}
		if _, _, err := x.Document(ctx, "entity", query); err != nil {
			t.Fatalf("Document(%q): %v", query, err)
		}
	})
}
