package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// acumaticaRetry is what the retry tests share: the Acumatica simulator
// registered as a site of a gateway (service connection, OAuth client)
// with its write tools on, Alice (full rights) signed in on the plain
// path, and the seeded customer and stock item to order.
type acumaticaRetry struct {
	sim            *acumaticatest.Server
	e              *writeERP
	c              *writeClient
	alice          writePerson
	customer, item string
}

func newAcumaticaRetry(t *testing.T) *acumaticaRetry {
	t.Helper()
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	t.Cleanup(sim.Close)
	gw := startGateway(t, "", writesGatewayEnv)
	ctx := context.Background()
	site, err := registerAcumaticaService(ctx, gw.admin, devState{}, acumaticaService(sim.ServiceLogin()), "acu", "Acumatica acu", sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(ctx, site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	u := sim.User(acumaticatest.RoleFull)
	r := &acumaticaRetry{sim: sim, alice: writePerson{ERPUser: u.Username + "@" + sim.Tenant(), Login: acumaticaLogin(u)},
		customer: sim.Data().Records("Customer")[0].String("CustomerID"),
		item:     sim.Data().Records("StockItem")[0].String("InventoryID")}
	r.e = &writeERP{Kind: "acumatica", GW: gw, Site: site, CreateTool: "acumatica_create_sales_order",
		Orders: func() int { return len(sim.Data().Records("SalesOrder")) }}
	r.e.enableWrites(t, "")
	r.c = r.e.connectWriter(t, r.alice, pathPlain)
	return r
}

// args are the create tool's arguments: an order of 3 of the item,
// described by description.
func (r *acumaticaRetry) args(description string) map[string]any {
	return map[string]any{"CustomerID": r.customer, "Description": description,
		"Details": []any{map[string]any{"InventoryID": r.item, "OrderQty": 3}}}
}

// orders counts the simulator's sales orders described by description.
func (r *acumaticaRetry) orders(description string) int {
	n := 0
	for _, rec := range r.sim.Data().Records("SalesOrder") {
		if rec.String("Description") == description {
			n++
		}
	}
	return n
}

// approved is the approval link of the call of the create tool with
// args, which Alice approved on the approval page.
func (r *acumaticaRetry) approved(t *testing.T, args map[string]any) string {
	t.Helper()
	link := r.e.approvalRequired(t, callTool(t, r.c.cs, r.e.CreateTool, args))
	r.e.approve(t, link, r.alice)
	return link
}

// TestWritesAcumaticaApprovalOutlivesARefusalThatWroteNothing: an approved
// sales order whose PUT Acumatica answers 409 "A long operation is
// running for this screen…" (the simulator's own sentence) was not
// saved, and the caller is told so (RATE_LIMITED, retryable). The approval
// is not spent on it: the same call from the same client, within the
// approval's lifetime, makes the approved order, without a second
// approval, and the ERP holds exactly one copy of it.
func TestWritesAcumaticaApprovalOutlivesARefusalThatWroteNothing(t *testing.T) {
	r := newAcumaticaRetry(t)
	sim, e, c := r.sim, r.e, r.c
	const description = "Retried after a long operation"
	orders := func() int { return r.orders(description) }
	args := r.args(description)

	link := r.approved(t, args)
	expiry := func() string {
		return queryString(t, e.GW.DBURL, `SELECT expires_at::text FROM pending_actions WHERE id = $1`, actionID(t, link))
	}
	approvedUntil := expiry()

	// Acumatica refuses the PUT: a long operation holds the Sales Orders
	// form in the session (the simulator's 409, with its sentence).
	const sentence = "A long operation is running for this screen in the current session. Please try again later."
	sim.SetFault(acumaticatest.Fault{PathPrefix: "/entity/Default/24.200.001/SalesOrder", Times: 1,
		Status: http.StatusConflict, Body: `{"message":"` + sentence + `"}`})
	busy := callTool(t, c.cs, e.CreateTool, args)
	be, _ := busy.Structured["error"].(map[string]any)
	if !busy.IsError || busy.errorCode() != "RATE_LIMITED" || be["retryable"] != true || !strings.Contains(errorMessage(busy), "Nothing was written") {
		t.Fatalf("the approved write Acumatica refused with 409: %s", busy.Text)
	}
	if n := orders(); n != 0 {
		t.Fatalf("%d orders after the refused write, want none", n)
	}
	if got := e.actionStatus(t, link); got != "approved" {
		t.Errorf("after a refusal that wrote nothing the action is %q, want approved (the same call may run it again)", got)
	}
	if !strings.Contains(errorMessage(busy), "approval still holds") {
		t.Errorf("the refusal does not say the approval still holds: %s", errorMessage(busy))
	}
	if got := expiry(); got != approvedUntil {
		t.Errorf("the approval's expiry moved from %s to %s: it is never extended", approvedUntil, got)
	}

	// The same call again: the approved order is made, with no new
	// approval, once.
	created := callTool(t, c.cs, e.CreateTool, args)
	if created.IsError {
		t.Fatalf("the same call after the refusal: %s", created.Text)
	}
	if nbr, _ := created.Structured["OrderNbr"].(string); nbr == "" || sim.Data().Find("SalesOrder", "SO", nbr) == nil {
		t.Errorf("the retry returned %s: no order the simulator holds", created.Text)
	}
	if n := orders(); n != 1 {
		t.Errorf("%d copies of the approved order in the ERP, want exactly 1", n)
	}
	if got := e.actionStatus(t, link); got != "executed" {
		t.Errorf("after the retry the action is %q, want executed", got)
	}
	// It was spent by the write it made: a replay writes nothing.
	replay := callTool(t, c.cs, e.CreateTool, args)
	if replay.errorCode() != "APPROVAL_INVALID" || orders() != 1 {
		t.Errorf("the replay after the write: %s; %d copies", replay.Text, orders())
	}
}

// TestWritesAcumaticaPXExceptionAfterTheSaveSpendsTheApproval: an approved
// sales order whose PUT Acumatica saved and then answered 500 with a
// PXException (its code failed after the save committed: the simulator
// saves, then answers the fault) is told as an outcome not known, and the
// approval is spent: the same call again makes no second order. So is one
// a proxy or load balancer in front of Acumatica answered, after
// forwarding the PUT, with a status Acumatica refuses a save with (409,
// 429) but a page of its own or an empty body: it is not Acumatica's
// refusal.
func TestWritesAcumaticaPXExceptionAfterTheSaveSpendsTheApproval(t *testing.T) {
	r := newAcumaticaRetry(t)
	sim, e, c := r.sim, r.e, r.c
	for _, fc := range []struct {
		name   string
		status int
		body   string
	}{
		{"a PXException", http.StatusInternalServerError, `{"message":"An error has occurred.","exceptionMessage":"Error: An error occurred while processing the order.","exceptionType":"PX.Data.PXException"}`},
		{"a proxy's 409 page", http.StatusConflict, "<html><body><h1>409 Conflict</h1></body></html>"},
		{"a load balancer's empty 429", http.StatusTooManyRequests, ""},
	} {
		t.Run(fc.name, func(t *testing.T) {
			description := "Saved before " + fc.name
			orders := func() int { return r.orders(description) }
			args := r.args(description)

			link := r.approved(t, args)

			sim.SetFault(acumaticatest.Fault{PathPrefix: "/entity/Default/24.200.001/SalesOrder", Times: 1, AfterServing: true,
				Status: fc.status, Body: fc.body})
			defer sim.ClearFaults()
			failed := callTool(t, c.cs, e.CreateTool, args)
			if !failed.IsError || !strings.HasPrefix(failed.errorCode(), "UPSTREAM_") || !strings.Contains(errorMessage(failed), "not known") ||
				strings.Contains(strings.ToLower(errorMessage(failed)), "nothing was written") || strings.Contains(errorMessage(failed), "approval still holds") {
				t.Errorf("the approved write Acumatica saved, answered with %s: %s; want an outcome not known", fc.name, failed.Text)
			}
			if n := orders(); n != 1 {
				t.Fatalf("%d orders after the PUT, want the 1 the simulator saved", n)
			}
			if got := e.actionStatus(t, link); got != "failed" {
				t.Errorf("after %s that may have saved the action is %q, want failed (spent)", fc.name, got)
			}
			again := callTool(t, c.cs, e.CreateTool, args)
			if again.errorCode() != "APPROVAL_INVALID" {
				t.Errorf("the same call again: %s; want APPROVAL_INVALID (outcome not known)", again.Text)
			}
			if n := orders(); n != 1 {
				t.Errorf("%d copies of the approved order in the ERP, want exactly 1", n)
			}
		})
	}
}
