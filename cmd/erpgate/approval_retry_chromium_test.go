package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// An approved Acumatica order whose save Acumatica refuses with 409 (a
// long operation holds the form: nothing was written) keeps its approval:
// the page shows it approved and waiting again, still withdrawable, and
// tells the approver why the first try wrote nothing, in plain words
// quoting Acumatica; the same call then makes it, and the page says so.
func TestChromiumApprovalKeptAfterARefusalThatWroteNothingAcumatica(t *testing.T) {
	needChromium(t)
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	mcpURL := acumaticaOAuthSite(t, gw, "acu", sim)
	if err := gw.admin.do(context.Background(), http.MethodPut, "/sites/acu/settings/write_tools", map[string]any{"value": []string{"acumatica_create_sales_order"}}, nil); err != nil {
		t.Fatal(err)
	}
	user := sim.User(acumaticatest.RoleFull)
	client := connectOAuth(t, mcpURL, acumaticaLogin(user))
	args := map[string]any{"CustomerID": sim.Data().Records("Customer")[0].String("CustomerID"), "Description": "Kept approval",
		"Details": []any{map[string]any{"InventoryID": sim.Data().Records("StockItem")[0].String("InventoryID"), "OrderQty": 1}}}

	first := callTool(t, client.cs, "acumatica_create_sales_order", args)
	if !first.IsError || first.errorCode() != "APPROVAL_REQUIRED" {
		t.Fatalf("the first call: %s", first.Text)
	}
	link := approvalURL.FindString(first.Text)
	ctx := newChromium(t)
	navigate(t, ctx, "open the approval link", chromedp.Navigate(link))
	waitForNewTitle(t, ctx, "Approve a change on Acumatica acu")
	navigate(t, ctx, "start the sign-in", chromedp.Click(chromedp.CSS(`form[action$="/sign-in"] button`)))
	finishAcumaticaSignIn(t, ctx, user, "Approve a change on Acumatica acu")
	navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	waitForNewTitle(t, ctx, "Change approved on Acumatica acu")

	const erpWords = "A long operation is running for this screen in the current session. Please try again later."
	sim.SetFault(acumaticatest.Fault{PathPrefix: "/entity/Default/24.200.001/SalesOrder", Times: 1,
		Status: http.StatusConflict, Body: `{"message":"` + erpWords + `"}`})
	busy := callTool(t, client.cs, "acumatica_create_sales_order", args)
	if !busy.IsError || busy.errorCode() != "RATE_LIMITED" {
		t.Fatalf("the call Acumatica refused: %s", busy.Text)
	}
	approvalPageSays(t, ctx, link, "Change approved on Acumatica acu", "approval-kept-acumatica.png",
		"The first try did not go through: Acumatica was too busy to take the change, so nothing was written. It said: “"+erpWords+"” The approval still holds",
		"RATE_LIMITED", "call again with the same arguments")
	if text := pageBody(t, ctx); !strings.Contains(text, "you can withdraw your approval") {
		t.Errorf("the kept approval cannot be withdrawn on the page: %s", text)
	}

	made := callTool(t, client.cs, "acumatica_create_sales_order", args)
	if made.IsError {
		t.Fatalf("the same call again: %s", made.Text)
	}
	n := 0
	for _, r := range sim.Data().Records("SalesOrder") {
		if r.String("Description") == "Kept approval" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d copies of the approved order, want 1", n)
	}
	approvalPageSays(t, ctx, link, "Change carried out on Acumatica acu", "approval-kept-then-made-acumatica.png",
		"This change was approved and carried out in Acumatica", "The first try did not go through")
}
