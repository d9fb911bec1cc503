package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/store/activity"
)

// The viewer scenario's shape.
const (
	viewerEvents     = 1_000_000
	viewerDays       = 30
	viewerUsers      = 200
	viewerClients    = 20
	viewerAuthEvents = 20_000
	viewerWarmup     = 3
	viewerRuns       = 20
	viewerTargetMS   = 200
)

type viewerScenario struct {
	Name    string      `json:"name"`
	Machine machineRef  `json:"machine"`
	Events  int64       `json:"events"`
	Seed    float64     `json:"seed_seconds"`
	Pages   []viewerRun `json:"pages"`
	Targets []target    `json:"targets"`
	Notes   []string    `json:"notes,omitempty"`
}

// viewerRun is one filter set, requested viewerRuns times in a row after
// viewerWarmup unmeasured requests.
type viewerRun struct {
	Name     string  `json:"name"`
	Query    string  `json:"query"`
	MedianMS float64 `json:"median_ms"`
	P95MS    float64 `json:"p95_ms"`
	MaxMS    float64 `json:"max_ms"`
	Bytes    int     `json:"bytes"`
}

// viewer seeds 1,000,000 usage events over 30 days and the benchmark's 100
// sites (one INSERT ... SELECT from generate_series, which also fills the
// chart rollup as a replica's janitor does, up to the closed hours), signs in to the console with the
// admin token, and times each viewer page for typical filter sets through
// the gateway: the query, the charts and the HTML, as a browser gets it.
func (b *bench) viewer(ctx context.Context, g *gatewayProc, tab *table) (any, error) {
	sc := &viewerScenario{Name: "viewer_1m", Machine: b.machine.ref()}
	conn, err := pgx.Connect(ctx, b.env.dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	end := time.Now().UTC().Truncate(time.Minute)
	started := time.Now()
	if err := seedViewer(ctx, conn, end); err != nil {
		return nil, err
	}
	if err := rollUpAll(ctx, b.env.dbURL, end); err != nil {
		return nil, err
	}
	sc.Seed = round(time.Since(started).Seconds(), 1)
	fmt.Printf("          seeded in %.0f s\n", sc.Seed)
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM usage_events`).Scan(&sc.Events); err != nil {
		return nil, err
	}

	client, err := consoleSession(ctx, g.URL, b.env.adminToken)
	if err != nil {
		return nil, err
	}
	// A page deep in the last 24 hours: the cursor of the 1,000th event.
	var at time.Time
	var id int64
	if err := conn.QueryRow(ctx, `SELECT occurred_at, id FROM usage_events WHERE occurred_at >= $1
		ORDER BY occurred_at DESC, id DESC OFFSET 999 LIMIT 1`, end.Add(-24*time.Hour)).Scan(&at, &id); err != nil {
		return nil, err
	}
	deep := activity.Cursor{At: at, ID: id}.String()
	var site, user, clientID string
	if err := conn.QueryRow(ctx, `SELECT slug FROM sites ORDER BY slug LIMIT 1`).Scan(&site); err != nil {
		return nil, err
	}
	if err := conn.QueryRow(ctx, `SELECT erp_user, client_id FROM usage_events WHERE erp_user <> '' LIMIT 1`).Scan(&user, &clientID); err != nil {
		return nil, err
	}
	day := func(d int) string { return end.Add(-time.Duration(d) * 24 * time.Hour).Format("2006-01-02T15:04") }
	to := end.Add(time.Minute).Format("2006-01-02T15:04")
	sets := []struct{ name, path string }{
		{"usage, last 24 h, every site (the default page)", "/console/usage"},
		{"usage, last 24 h, one site", "/console/usage?site=" + site},
		{"usage, last 24 h, page 21 (after 1,000 events)", "/console/usage?from=" + day(1) + "&to=" + to + "&after=" + deep},
		{"usage, 7 days, one site and tool, by hour", "/console/usage?from=" + day(7) + "&to=" + to + "&site=" + site + "&tool=list_customers&step=hour"},
		{"usage, 30 days, every site, by day", "/console/usage?from=" + day(30) + "&to=" + to + "&step=day"},
		{"usage, 30 days, one ERP user, by day", "/console/usage?from=" + day(30) + "&to=" + to + "&erp_user=" + url.QueryEscape(user) + "&step=day"},
		{"usage, 7 days, failed calls, by day", "/console/usage?from=" + day(7) + "&to=" + to + "&outcome=error&step=day"},
		{"usage, 24 h, one MCP client", "/console/usage?client=" + url.QueryEscape(clientID)},
		{"usage, 30 days, one MCP client, by day", "/console/usage?from=" + day(30) + "&to=" + to + "&client=" + url.QueryEscape(clientID) + "&step=day"},
		{"audit, 30 days, every site", "/console/audit?from=" + day(30) + "&to=" + to},
	}
	worst := 0.0
	for _, s := range sets {
		run, err := timePage(ctx, client, g.URL+s.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		run.Name, run.Query = s.name, s.path
		sc.Pages = append(sc.Pages, run)
		worst = max(worst, run.P95MS)
		line := fmt.Sprintf("median %.1f ms, p95 %.1f ms, max %.1f ms", run.MedianMS, run.P95MS, run.MaxMS)
		fmt.Printf("          %s: %s\n", s.name, line)
		tab.add("viewer_1m", s.name, line)
	}
	sc.Targets = []target{{
		Target: fmt.Sprintf("every viewer page over %d events < %d ms (p95 of %d requests per filter set)", viewerEvents, viewerTargetMS, viewerRuns),
		Value:  worst, Unit: "ms", Met: worst < viewerTargetMS,
	}}
	sc.Notes = []string{
		fmt.Sprintf("%d tool calls over %d days across the benchmark's sites, %d ERP users, %d clients, 3%% failing; %d sign-in events", viewerEvents, viewerDays, viewerUsers, viewerClients, viewerAuthEvents),
		"each page is a GET through the gateway with a console session: the events query, the chart query and the HTML with three SVG charts; 50 events a page",
		"charts without a filter on ERP user, client, outcome or error code read the hourly rollup (migration 00023); with one, the matching events through that filter's index",
	}
	tab.add("", "seeded", fmt.Sprintf("%d events in %.1f s", sc.Events, sc.Seed))
	tab.add("", "targets", metMark(sc.Targets))
	return sc, nil
}

// seedViewer inserts the events ending at end, then vacuums and analyses
// the tables as autovacuum would after such a load.
func seedViewer(ctx context.Context, conn *pgx.Conn, end time.Time) error {
	// The events of the scenarios run before this one are gone first, and
	// the rollup starts over: otherwise the hour the suite is running in
	// holds another million of them, which every chart of the last 24 h
	// reads, and the janitor, already past the seeded days, never rolls
	// them up.
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `TRUNCATE usage_events, usage_rollup`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE usage_rollup_mark SET rolled_until = date_trunc('hour', $1::timestamptz - $2::interval, 'UTC')`,
			end, pgtype.Interval{Days: viewerDays + 1, Valid: true})
		return err
	}); err != nil {
		return fmt.Errorf("clear the usage events: %w", err)
	}
	for _, q := range []string{
		`CREATE TEMP TABLE bench_sites AS SELECT row_number() OVER (ORDER BY slug) - 1 AS n, id, slug FROM sites`,
		fmt.Sprintf(`INSERT INTO usage_events (occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, error_code,
		                          duration_ms, erp_ms, erp_user, client_id)
		SELECT $1::timestamptz - (i::float8 / %[1]d) * interval '%[2]d days', s.id, s.slug, 'oauth', 'bench-' || i, 'tools/call',
		       (ARRAY['list_customers','get_customer','list_sales_invoices','get_sales_invoice','search',
		              'list_items','get_item','list_suppliers','run_report','list_payments'])[1 + floor(power(random(), 2) * 10)::int],
		       CASE WHEN e < 0.03 THEN 'error' WHEN e < 0.032 THEN 'cancelled' ELSE 'success' END,
		       CASE WHEN e < 0.03 THEN (ARRAY['PERMISSION_DENIED','NOT_FOUND','UPSTREAM_TIMEOUT','RATE_LIMITED','INVALID_ARGUMENT'])[1 + (i %% 5)] ELSE '' END,
		       d + gw, d, 'user' || (i %% %[3]d) || '@bench.example', 'client-' || (i %% %[4]d)
		FROM (SELECT i, random() AS e, (5 + random() * random() * 400)::int AS d, (1 + random() * 6)::int AS gw
		      FROM generate_series(1, %[1]d) i) x
		JOIN bench_sites s ON s.n = x.i %% (SELECT count(*) FROM bench_sites)`, viewerEvents, viewerDays, viewerUsers, viewerClients),
		fmt.Sprintf(`INSERT INTO auth_events (occurred_at, site_id, event, erp_user, client_id, reason)
		SELECT $1::timestamptz - (i::float8 / %[1]d) * interval '%[2]d days', s.id,
		       CASE WHEN i %% 50 = 0 THEN 'login_denied' WHEN i %% 2 = 0 THEN 'consent' ELSE 'sign_in' END,
		       'user' || (i %% %[3]d) || '@bench.example', 'client-' || (i %% %[4]d), CASE WHEN i %% 50 = 0 THEN 'access_denied' ELSE '' END
		FROM generate_series(1, %[1]d) i JOIN bench_sites s ON s.n = i %% (SELECT count(*) FROM bench_sites)`, viewerAuthEvents, viewerDays, viewerUsers, viewerClients),
		`VACUUM ANALYZE usage_events`, `VACUUM ANALYZE auth_events`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = []any{end}
		}
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			return fmt.Errorf("seed the viewer's events: %w", err)
		}
	}
	return nil
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// consoleSession signs in to the console as the operator and returns a
// client that carries the session cookie.
func consoleSession(ctx context.Context, base, adminToken string) (*http.Client, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	body, status, err := get(ctx, c, base+"/console/sign-in")
	if err != nil {
		return nil, err
	}
	m := csrfField.FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		return nil, fmt.Errorf("console sign-in form: status %d", status)
	}
	form := url.Values{"token": {adminToken}, "csrf": {m[1]}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/console/sign-in", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !strings.HasSuffix(resp.Request.URL.Path, "/console/sites") {
		return nil, fmt.Errorf("console sign-in ended at %s (status %d)", resp.Request.URL.Path, resp.StatusCode)
	}
	return c, nil
}

func get(ctx context.Context, c *http.Client, u string) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode, err
}

// timePage requests u viewerWarmup times unmeasured, then viewerRuns times
// measured, each from sending the request to having read the whole page.
func timePage(ctx context.Context, c *http.Client, u string) (viewerRun, error) {
	var runs []time.Duration
	var run viewerRun
	for i := range viewerWarmup + viewerRuns {
		start := time.Now()
		body, status, err := get(ctx, c, u)
		took := time.Since(start)
		if err != nil {
			return run, err
		}
		if status != http.StatusOK || !strings.Contains(body, `id="events-heading"`) {
			return run, fmt.Errorf("status %d, not a viewer page: %.300s", status, body)
		}
		if i >= viewerWarmup {
			runs = append(runs, took)
			run.Bytes = len(body)
		}
	}
	slices.Sort(runs)
	run.MedianMS = ms(runs[len(runs)/2])
	run.P95MS = ms(runs[(len(runs)*95+99)/100-1])
	run.MaxMS = ms(runs[len(runs)-1])
	return run, nil
}

// rollUpAll adds every closed hour of the seeded events to the chart
// rollup, as the replicas' janitor does a minute at a time, then analyses
// the rollup.
func rollUpAll(ctx context.Context, dbURL string, now time.Time) error {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	store := activity.NewStore(pool)
	closed := now.Add(-activity.RollUpGrace).UTC().Truncate(time.Hour)
	for {
		// A run that adds nothing may have found the gateway's own janitor
		// at work: the mark says when every closed hour is in.
		if _, err := store.RollUp(ctx, now); err != nil {
			return err
		}
		var done bool
		if err := pool.QueryRow(ctx, `SELECT rolled_until >= $1 FROM usage_rollup_mark`, closed).Scan(&done); err != nil {
			return err
		}
		if done {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err = pool.Exec(ctx, `VACUUM ANALYZE usage_rollup`)
	return err
}
