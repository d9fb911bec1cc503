package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/store/approval"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// clock is a settable clock for the store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	pool  *pgxpool.Pool
	store *approval.Store
	clock *clock
	siteA uuid.UUID
	siteB uuid.UUID
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	pool := pgtest.NewPool(t)
	f := &fixture{pool: pool, store: approval.NewStore(pool, nil), clock: &clock{t: time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC)},
		siteA: uuid.New(), siteB: uuid.New()}
	f.store.SetNow(f.clock.now)
	for slug, id := range map[string]uuid.UUID{"acme": f.siteA, "other": f.siteB} {
		if _, err := pool.Exec(t.Context(),
			`INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, $2, 'frappe', $3, $2)`,
			id, slug, "https://"+slug+".example.com"); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func mustDigest(t *testing.T, args string) [32]byte {
	t.Helper()
	d, err := approval.Digest(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (f *fixture) key(t *testing.T, site uuid.UUID, user, args string) approval.Key {
	return approval.Key{SiteID: site, AuthType: "oauth", Principal: user, ClientID: "client-1", Tool: "create_sales_order", ArgsDigest: mustDigest(t, args)}
}

func (f *fixture) propose(t *testing.T, k approval.Key, approver string) approval.Action {
	t.Helper()
	a, err := f.store.Propose(t.Context(), approval.Action{Key: k, SiteSlug: "acme", Kind: "frappe", ClientID: "client-1",
		Approver: approver, Preview: connector.Preview{Operation: "create", DocType: "Sales Order",
			Summary: "Create a draft Sales Order for Acme Corp", Fields: []connector.PreviewField{{Name: "customer", Label: "Customer", After: "Acme Corp"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

type event struct{ actorKind, actor, action, outcome, reason string }

func (f *fixture) events(t *testing.T, site uuid.UUID) []event {
	t.Helper()
	rows, err := f.pool.Query(t.Context(),
		`SELECT actor_kind, actor, action, outcome, reason FROM admin_events WHERE site_id = $1 ORDER BY id`, site)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []event
	for rows.Next() {
		var e event
		if err := rows.Scan(&e.actorKind, &e.actor, &e.action, &e.outcome, &e.reason); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestLifecycleProposeApproveClaimFinish(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	k := f.key(t, f.siteA, "jane@acme.test", `{"customer":"Acme Corp","items":[{"item_code":"W-1","qty":2}]}`)
	a := f.propose(t, k, "jane@acme.test")
	if a.Status != approval.Proposed || a.ID == uuid.Nil || !a.ExpiresAt.Equal(f.clock.now().Add(approval.TTL)) {
		t.Fatalf("proposed: %+v", a)
	}
	open, ok, err := f.store.Open(ctx, k)
	if err != nil || !ok || open.ID != a.ID || open.Preview.Fields[0].After != "Acme Corp" {
		t.Fatalf("open: %+v %v %v", open, ok, err)
	}
	// Not approved yet: no claim.
	if _, err := f.store.Claim(ctx, k, a.ID); !errors.Is(err, approval.ErrNotApproved) {
		t.Fatalf("claim before approval: %v", err)
	}
	d, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", true)
	if err != nil || d.Status != approval.Approved || d.DecidedBy != "jane@acme.test" || d.DecidedAt.IsZero() {
		t.Fatalf("decide: %+v %v", d, err)
	}
	c, err := f.store.Claim(ctx, k, a.ID)
	if err != nil || c.Status != approval.Executing || c.ExecutedAt.IsZero() {
		t.Fatalf("claim: %+v %v", c, err)
	}
	if err := f.store.Finish(ctx, f.siteA, a.ID, json.RawMessage(`{"name":"SAL-ORD-0001"}`), "", ""); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Finish(ctx, f.siteA, a.ID, nil, "INTERNAL", "again"); !errors.Is(err, approval.ErrUsed) {
		t.Fatalf("second finish: %v", err)
	}
	got, err := f.store.Get(ctx, f.siteA, a.ID)
	if err != nil || got.Status != approval.Executed || string(got.Result) != `{"name": "SAL-ORD-0001"}` {
		t.Fatalf("after finish: %+v %s %v", got, got.Result, err)
	}
	// A replay: already used, and audited.
	if _, err := f.store.Claim(ctx, k, a.ID); !errors.Is(err, approval.ErrUsed) {
		t.Fatalf("replayed claim: %v", err)
	}
	// Told once, the same call proposes afresh.
	if err := f.store.Report(ctx, f.siteA, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.store.Open(ctx, k); ok {
		t.Fatal("a reported action is still open")
	}
	want := []event{
		{"mcp_client", "client-1", "write_proposed", "success", ""},
		{"erp_user", "jane@acme.test", "write_approved", "success", ""},
		{"mcp_client", "client-1", "write_executed", "success", ""},
		{"mcp_client", "client-1", "write_refused", "refused", "already_used"},
	}
	if got := f.events(t, f.siteA); !equalEvents(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
}

func equalEvents(a, b []event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFailedOutcomeIsStored(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	k := f.key(t, f.siteA, "jane@acme.test", `{"customer":"Acme Corp"}`)
	a := f.propose(t, k, "jane@acme.test")
	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Claim(ctx, k, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Finish(ctx, f.siteA, a.ID, json.RawMessage(`{"x":1}`), "PERMISSION_DENIED", "Not permitted"); err != nil {
		t.Fatal(err)
	}
	got, _ := f.store.Get(ctx, f.siteA, a.ID)
	if got.Status != approval.Failed || got.ErrorCode != "PERMISSION_DENIED" || got.ErrorMessage != "Not permitted" || got.Result != nil {
		t.Fatalf("failed: %+v", got)
	}
	ev := f.events(t, f.siteA)
	if last := ev[len(ev)-1]; last.action != "write_failed" || last.outcome != "error" || last.reason != "PERMISSION_DENIED" {
		t.Fatalf("last event %+v", last)
	}
}

// The attacker's view: everything that must not let a write through.
func TestAttackerCannotDecideOrClaimWhatIsNotTheirs(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	args := `{"customer":"Acme Corp"}`
	k := f.key(t, f.siteA, "jane@acme.test", args)
	a := f.propose(t, k, "jane@acme.test")

	// Another site's id: not found, on every query.
	if _, err := f.store.Get(ctx, f.siteB, a.ID); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("get from another site: %v", err)
	}
	if _, err := f.store.Decide(ctx, f.siteB, a.ID, "jane@acme.test", true); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("decide from another site: %v", err)
	}
	otherSite := k
	otherSite.SiteID = f.siteB
	if _, ok, _ := f.store.Open(ctx, otherSite); ok {
		t.Fatal("open from another site found the action")
	}

	// Another approver: refused, audited, and the action stays proposed.
	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "mallory@acme.test", true); !errors.Is(err, approval.ErrWrongUser) {
		t.Fatalf("another approver: %v", err)
	}
	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "", true); !errors.Is(err, approval.ErrWrongUser) {
		t.Fatalf("no approver: %v", err)
	}
	if got, _ := f.store.Get(ctx, f.siteA, a.ID); got.Status != approval.Proposed {
		t.Fatalf("after refusals: %s", got.Status)
	}

	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", true); err != nil {
		t.Fatal(err)
	}
	// A double Decide: single use, whichever way.
	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", false); !errors.Is(err, approval.ErrDecided) {
		t.Fatalf("second decide: %v", err)
	}
	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", true); !errors.Is(err, approval.ErrDecided) {
		t.Fatalf("third decide: %v", err)
	}

	// Claims with another key: another principal, tool, arguments, auth
	// type, site; and a made-up id.
	mismatches := map[string]approval.Key{}
	kk := k
	kk.Principal = "mallory@acme.test"
	mismatches["principal"] = kk
	kk = k
	kk.Tool = "submit_document"
	mismatches["tool"] = kk
	kk = k
	kk.ArgsDigest = mustDigest(t, `{"customer":"Evil Corp"}`)
	mismatches["arguments"] = kk
	kk = k
	kk.AuthType = "service_token"
	mismatches["auth type"] = kk
	for name, mk := range mismatches {
		if got, err := f.store.Claim(ctx, mk, a.ID); !errors.Is(err, approval.ErrMismatch) || got.ID != uuid.Nil {
			t.Fatalf("claim with another %s: %+v %v", name, got, err)
		}
	}
	// The same person's call through another MCP client: not theirs
	// either, and said so.
	otherClient := k
	otherClient.ClientID = "client-2"
	if got, err := f.store.Claim(ctx, otherClient, a.ID); !errors.Is(err, approval.ErrOtherClient) || got.ID != uuid.Nil {
		t.Fatalf("claim through another client: %+v %v", got, err)
	}
	if _, ok, _ := f.store.Open(ctx, otherClient); ok {
		t.Fatal("open through another client found the action")
	}
	if _, err := f.store.Claim(ctx, otherSite, a.ID); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("claim from another site: %v", err)
	}
	if _, err := f.store.Claim(ctx, k, uuid.New()); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("claim of a made-up id: %v", err)
	}
	// None of that used the approval.
	if _, err := f.store.Claim(ctx, k, a.ID); err != nil {
		t.Fatalf("the rightful claim: %v", err)
	}
	refused := 0
	for _, e := range f.events(t, f.siteA) {
		if e.action == "write_refused" {
			refused++
		}
	}
	// 2 wrong users, 2 double decides, 4 mismatches, 1 other client, 1
	// made-up id.
	if refused != 10 {
		t.Fatalf("%d refusals audited, want 10", refused)
	}
}

func TestRejectedIsNeverClaimed(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	k := f.key(t, f.siteA, "jane@acme.test", `{}`)
	a := f.propose(t, k, "jane@acme.test")
	if d, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", false); err != nil || d.Status != approval.Rejected {
		t.Fatalf("reject: %+v %v", d, err)
	}
	if _, err := f.store.Claim(ctx, k, a.ID); !errors.Is(err, approval.ErrRejected) {
		t.Fatalf("claim of a rejected action: %v", err)
	}
}

func TestConcurrentClaimsExactlyOneWins(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	k := f.key(t, f.siteA, "jane@acme.test", `{"customer":"Acme Corp"}`)
	a := f.propose(t, k, "jane@acme.test")
	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", true); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var (
		wg         sync.WaitGroup
		start      = make(chan struct{})
		mu         sync.Mutex
		wins, used int
	)
	for range n {
		wg.Go(func() {
			<-start
			_, err := f.store.Claim(context.Background(), k, a.ID)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, approval.ErrUsed):
				used++
			default:
				t.Errorf("claim: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins != 1 || used != n-1 {
		t.Fatalf("%d wins, %d already used; want 1 and %d", wins, used, n-1)
	}
}

func TestExpiry(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	k := f.key(t, f.siteA, "jane@acme.test", `{"a":1}`)
	late := f.propose(t, k, "jane@acme.test")
	f.clock.add(approval.TTL)
	// Deciding at the expiry is too late.
	if _, err := f.store.Decide(ctx, f.siteA, late.ID, "jane@acme.test", true); !errors.Is(err, approval.ErrExpired) {
		t.Fatalf("decide at expiry: %v", err)
	}

	// Approved in time, claimed too late.
	k2 := f.key(t, f.siteA, "jane@acme.test", `{"a":2}`)
	a := f.propose(t, k2, "jane@acme.test")
	f.clock.add(approval.TTL - time.Second)
	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", true); err != nil {
		t.Fatal(err)
	}
	f.clock.add(time.Second)
	if got, err := f.store.Claim(ctx, k2, a.ID); !errors.Is(err, approval.ErrExpired) || got.ID != a.ID {
		t.Fatalf("claim at expiry: %v", err)
	}

	// Sweep keeps a day past expiry, then deletes.
	if n, err := f.store.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("early sweep: %d %v", n, err)
	}
	f.clock.add(approval.SweepAfter + time.Second)
	if n, err := f.store.Sweep(ctx); err != nil || n != 2 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if _, err := f.store.Lookup(ctx, a.ID); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("after sweep: %v", err)
	}
}

func TestOpenReturnsTheNewestUnreported(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	k := f.key(t, f.siteA, "jane@acme.test", `{"a":1}`)
	first := f.propose(t, k, "jane@acme.test")
	if _, err := f.store.Decide(ctx, f.siteA, first.ID, "jane@acme.test", false); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := f.store.Open(ctx, k); !ok || got.ID != first.ID || got.Status != approval.Rejected {
		t.Fatalf("open: %+v", got)
	}
	if err := f.store.Report(ctx, f.siteA, first.ID); err != nil {
		t.Fatal(err)
	}
	f.clock.add(time.Second)
	second := f.propose(t, k, "jane@acme.test")
	if got, ok, _ := f.store.Open(ctx, k); !ok || got.ID != second.ID || got.Status != approval.Proposed {
		t.Fatalf("open after report: %+v", got)
	}
	if a, err := f.store.Lookup(ctx, first.ID); err != nil || a.Key != k {
		t.Fatalf("lookup: %+v %v", a, err)
	}
}

// Two proposals of one call (two racing first calls): the one the person
// approved is the one found, whichever is newer.
func TestOpenPrefersTheApprovedProposal(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	k := f.key(t, f.siteA, "jane@acme.test", `{"a":1}`)
	older := f.propose(t, k, "jane@acme.test")
	f.clock.add(time.Second)
	newer := f.propose(t, k, "jane@acme.test")
	if got, _, _ := f.store.Open(ctx, k); got.ID != newer.ID {
		t.Fatalf("open before approval: %s, want the newer %s", got.ID, newer.ID)
	}
	if _, err := f.store.Decide(ctx, f.siteA, older.ID, "jane@acme.test", true); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := f.store.Open(ctx, k); got.ID != older.ID || got.Status != approval.Approved {
		t.Fatalf("open after approving the older: %+v", got)
	}
}

// The person who approved withdraws the approval before the change ran:
// the action is withdrawn, never claimed; nobody else can withdraw it; an
// action not approved, expired, or already claimed cannot be withdrawn.
func TestWithdraw(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	k := f.key(t, f.siteA, "jane@acme.test", `{"customer":"Acme Corp"}`)
	a := f.propose(t, k, "jane@acme.test")

	// Not approved yet: nothing to withdraw (the page rejects instead).
	if got, err := f.store.Withdraw(ctx, f.siteA, a.ID, "jane@acme.test"); !errors.Is(err, approval.ErrNotApproved) || got.Status != approval.Proposed {
		t.Fatalf("withdraw a proposal: %+v %v", got.Status, err)
	}
	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", true); err != nil {
		t.Fatal(err)
	}
	// Another person, another site, nobody.
	if _, err := f.store.Withdraw(ctx, f.siteA, a.ID, "mallory@acme.test"); !errors.Is(err, approval.ErrWrongUser) {
		t.Fatalf("another person withdrew: %v", err)
	}
	if _, err := f.store.Withdraw(ctx, f.siteA, a.ID, ""); !errors.Is(err, approval.ErrWrongUser) {
		t.Fatalf("nobody withdrew: %v", err)
	}
	if _, err := f.store.Withdraw(ctx, f.siteB, a.ID, "jane@acme.test"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("withdraw from another site: %v", err)
	}
	f.clock.add(time.Minute)
	w, err := f.store.Withdraw(ctx, f.siteA, a.ID, "jane@acme.test")
	if err != nil || w.Status != approval.Withdrawn || !w.WithdrawnAt.Equal(f.clock.now().UTC().Truncate(time.Microsecond)) || w.DecidedBy != "jane@acme.test" {
		t.Fatalf("withdraw: %+v %v", w, err)
	}
	// Withdrawn: never claimed, not withdrawn twice, not decided again;
	// the caller is told (Open returns it until reported).
	if got, err := f.store.Claim(ctx, k, a.ID); !errors.Is(err, approval.ErrWithdrawn) || got.Status != approval.Withdrawn {
		t.Fatalf("claim of a withdrawn action: %+v %v", got.Status, err)
	}
	if _, err := f.store.Withdraw(ctx, f.siteA, a.ID, "jane@acme.test"); !errors.Is(err, approval.ErrWithdrawn) {
		t.Fatalf("second withdrawal: %v", err)
	}
	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", true); !errors.Is(err, approval.ErrDecided) {
		t.Fatalf("approve a withdrawn action: %v", err)
	}
	if open, ok, err := f.store.Open(ctx, k); err != nil || !ok || open.ID != a.ID || open.Status != approval.Withdrawn {
		t.Fatalf("open: %+v %v %v", open, ok, err)
	}

	// Claimed (running or done): too late.
	k2 := f.key(t, f.siteA, "jane@acme.test", `{"customer":"Beta Ltd"}`)
	b := f.propose(t, k2, "jane@acme.test")
	if _, err := f.store.Decide(ctx, f.siteA, b.ID, "jane@acme.test", true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Claim(ctx, k2, b.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := f.store.Withdraw(ctx, f.siteA, b.ID, "jane@acme.test"); !errors.Is(err, approval.ErrUsed) || got.Status != approval.Executing {
		t.Fatalf("withdraw a running write: %+v %v", got.Status, err)
	}
	if err := f.store.Finish(ctx, f.siteA, b.ID, json.RawMessage(`{"name":"SO-1"}`), "", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := f.store.Withdraw(ctx, f.siteA, b.ID, "jane@acme.test"); !errors.Is(err, approval.ErrUsed) || got.Status != approval.Executed {
		t.Fatalf("withdraw a write made: %+v %v", got.Status, err)
	}

	// Expired: nothing left to withdraw.
	k3 := f.key(t, f.siteA, "jane@acme.test", `{"customer":"Gamma"}`)
	c := f.propose(t, k3, "jane@acme.test")
	if _, err := f.store.Decide(ctx, f.siteA, c.ID, "jane@acme.test", true); err != nil {
		t.Fatal(err)
	}
	f.clock.add(approval.TTL)
	if _, err := f.store.Withdraw(ctx, f.siteA, c.ID, "jane@acme.test"); !errors.Is(err, approval.ErrExpired) {
		t.Fatalf("withdraw an expired approval: %v", err)
	}

	var withdrawn, refused int
	for _, e := range f.events(t, f.siteA) {
		switch {
		case e.action == approval.EventWithdrawn && e.actorKind == approval.ActorERPUser && e.actor == "jane@acme.test" && e.outcome == "success":
			withdrawn++
		case e.action == approval.EventRefused && e.actorKind == approval.ActorERPUser:
			refused++
		}
	}
	// Refused on the page: the proposal, mallory, nobody, the second
	// withdrawal, the double decide, twice too late, the expired one.
	if withdrawn != 1 || refused != 8 {
		t.Fatalf("%d withdrawals and %d refusals by a person audited, want 1 and 8", withdrawn, refused)
	}
}

// A retry claiming an approval and its approver withdrawing it, racing:
// exactly one of the two wins, every time, and the row says which.
func TestConcurrentClaimAndWithdrawExactlyOneWins(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	const rounds = 40
	claims, withdrawals := 0, 0
	for i := range rounds {
		k := f.key(t, f.siteA, "jane@acme.test", `{"round":`+strconv.Itoa(i)+`}`)
		a := f.propose(t, k, "jane@acme.test")
		if _, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", true); err != nil {
			t.Fatal(err)
		}
		var (
			wg                   sync.WaitGroup
			start                = make(chan struct{})
			claimErr, withdrawEr error
		)
		wg.Go(func() { <-start; _, claimErr = f.store.Claim(context.Background(), k, a.ID) })
		wg.Go(func() {
			<-start
			_, withdrawEr = f.store.Withdraw(context.Background(), f.siteA, a.ID, "jane@acme.test")
		})
		close(start)
		wg.Wait()
		got, err := f.store.Get(ctx, f.siteA, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case claimErr == nil && errors.Is(withdrawEr, approval.ErrUsed) && got.Status == approval.Executing && got.WithdrawnAt.IsZero():
			claims++
		case withdrawEr == nil && errors.Is(claimErr, approval.ErrWithdrawn) && got.Status == approval.Withdrawn && got.ExecutedAt.IsZero():
			withdrawals++
		default:
			t.Fatalf("round %d: claim %v, withdraw %v, row %s (executed %v, withdrawn %v)", i, claimErr, withdrawEr, got.Status, got.ExecutedAt, got.WithdrawnAt)
		}
	}
	t.Logf("%d claims won, %d withdrawals won", claims, withdrawals)
}

// A run certain to have written nothing gives the action back its
// approval, its expiry unchanged; of retries racing to claim it again
// exactly one wins; only an executing action is released.
func TestReleaseKeepsTheApprovalForOneMoreRun(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	k := f.key(t, f.siteA, "jane@acme.test", `{"customer":"Acme Corp"}`)
	a := f.propose(t, k, "jane@acme.test")
	if _, err := f.store.Decide(ctx, f.siteA, a.ID, "jane@acme.test", true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Release(ctx, f.siteA, a.ID, "RATE_LIMITED", ""); !errors.Is(err, approval.ErrUsed) {
		t.Fatalf("release of an action not claimed: %v, want ErrUsed", err)
	}
	if _, err := f.store.Claim(ctx, k, a.ID); err != nil {
		t.Fatal(err)
	}
	f.clock.add(time.Minute)
	kept, err := f.store.Release(ctx, f.siteB, a.ID, "RATE_LIMITED", "busy")
	if !errors.Is(err, approval.ErrUsed) {
		t.Fatalf("release through another site: %v, want ErrUsed", err)
	}
	kept, err = f.store.Release(ctx, f.siteA, a.ID, "RATE_LIMITED", "A long operation is running.")
	if err != nil {
		t.Fatal(err)
	}
	if kept.Status != approval.Approved || !kept.ExpiresAt.Equal(a.ExpiresAt) || !kept.ExecutedAt.IsZero() ||
		kept.ERPSaid != "A long operation is running." || kept.OutcomeUnknown() || kept.NotAsApproved() {
		t.Fatalf("released: %+v; want approved, expiry %s, the ERP's words kept", kept, a.ExpiresAt)
	}
	if _, err := f.store.Release(ctx, f.siteA, a.ID, "RATE_LIMITED", ""); !errors.Is(err, approval.ErrUsed) {
		t.Fatalf("second release: %v, want ErrUsed", err)
	}
	const n = 8
	var (
		wg         sync.WaitGroup
		start      = make(chan struct{})
		mu         sync.Mutex
		wins, used int
	)
	for range n {
		wg.Go(func() {
			<-start
			_, err := f.store.Claim(context.Background(), k, a.ID)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, approval.ErrUsed):
				used++
			default:
				t.Errorf("claim: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins != 1 || used != n-1 {
		t.Fatalf("%d wins, %d already used; want 1 and %d", wins, used, n-1)
	}
	got, err := f.store.Get(ctx, f.siteA, a.ID)
	if err != nil || got.Status != approval.Executing || got.ErrorCode != "" || got.ERPSaid != "" {
		t.Fatalf("claimed again: %+v %v; want executing, the last try's error cleared", got, err)
	}
	if err := f.store.Finish(ctx, f.siteA, a.ID, json.RawMessage(`{"name":"SAL-ORD-1"}`), "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Release(ctx, f.siteA, a.ID, "RATE_LIMITED", ""); !errors.Is(err, approval.ErrUsed) {
		t.Fatalf("release of an executed action: %v, want ErrUsed", err)
	}
	// Released past its expiry, it is not claimed again.
	b := f.propose(t, f.key(t, f.siteA, "jane@acme.test", `{"customer":"Late"}`), "jane@acme.test")
	if _, err := f.store.Decide(ctx, f.siteA, b.ID, "jane@acme.test", true); err != nil {
		t.Fatal(err)
	}
	kb := f.key(t, f.siteA, "jane@acme.test", `{"customer":"Late"}`)
	if _, err := f.store.Claim(ctx, kb, b.ID); err != nil {
		t.Fatal(err)
	}
	f.clock.add(approval.TTL)
	if _, err := f.store.Release(ctx, f.siteA, b.ID, "RATE_LIMITED", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Claim(ctx, kb, b.ID); !errors.Is(err, approval.ErrExpired) {
		t.Fatalf("claim of a released action past its expiry: %v, want ErrExpired", err)
	}
}
