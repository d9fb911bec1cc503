package main

import (
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runWriteSuite walks writes with approval (docs/writes.md) end to end on
// one ERP: the official SDK client over OAuth on each client path, the
// approval page as a person uses it, the ERP's own answer, and every
// attack of the threat model refused with no write.
func runWriteSuite(t *testing.T, e *writeERP) {
	e.enableWrites(t, "")
	n := 0
	args := func() (int, map[string]any) { n++; return n, e.CreateArgs(n) }

	t.Run("2026-07-28: the SDK's elicitation handler gets the approval URL and the retry writes", func(t *testing.T) {
		c := e.connectWriter(t, e.Alice, pathMRTR)
		k, a := args()
		ordersBefore := e.Orders()
		// The SDK calls the handler on a goroutine of its own while
		// CallTool waits: the person's part runs here, on the test's.
		asked, answer := make(chan *mcp.ElicitParams), make(chan *mcp.ElicitResult)
		c.onElicit = func(el *mcp.ElicitParams) *mcp.ElicitResult { asked <- el; return <-answer }
		type called struct {
			res *mcp.CallToolResult
			err error
		}
		done := make(chan called, 1)
		go func() {
			res, err := callRaw(c.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: a})
			done <- called{res, err}
		}()
		var el *mcp.ElicitParams
		select {
		case el = <-asked:
		case r := <-done:
			t.Fatalf("the call ended without asking for the approval: %+v %v", r.res, r.err)
		case <-time.After(60 * time.Second):
			t.Fatal("no elicitation within 60 s")
		}
		e.checkElicitation(t, el)
		if got := e.actionStatus(t, el.URL); got != "proposed" {
			t.Errorf("the action is %q while the person looks at it", got)
		}
		if e.Orders() != ordersBefore {
			t.Error("the ERP was written before the approval")
		}
		e.approve(t, el.URL, e.Alice)
		answer <- &mcp.ElicitResult{Action: "accept"}
		r := <-done
		if r.err != nil {
			t.Fatalf("the resumed call: %v", r.err)
		}
		created := mustSucceed(t, decodeToolResult(t, e.CreateTool, r.res), e.CreateTool)
		if got := e.Orders(); got != ordersBefore+1 {
			t.Errorf("%d sales orders written, want exactly 1", got-ordersBefore)
		}
		if len(c.elicited) != 1 {
			t.Fatalf("%d elicitations, want 1", len(c.elicited))
		}
		if got := e.actionStatus(t, c.elicited[0].URL); got != "executed" {
			t.Errorf("the action is %q after the write", got)
		}
		e.ReadBack(t, c.cs, created, k)
	})

	t.Run("2025-11-25 declaring URL elicitation: -32042 with the URL; after approval the same call writes", func(t *testing.T) {
		c := e.connectWriter(t, e.Alice, pathURLError)
		k, a := args()
		var el *mcp.ElicitParams
		e.noWrite(t, "the proposal", func() {
			_, err := callRaw(c.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: a})
			el = e.urlElicitationRequired(t, err)
		})
		e.approve(t, el.URL, e.Alice)
		var created map[string]any
		e.oneWrite(t, "the same call after approval", func() {
			created = mustSucceed(t, callTool(t, c.cs, e.CreateTool, a), e.CreateTool)
		})
		e.ReadBack(t, c.cs, created, k)
	})

	for _, path := range []string{pathPlain, pathPlainLegacy} {
		t.Run("a client that declares nothing ("+path+"): APPROVAL_REQUIRED with the URL; after approval the same call writes", func(t *testing.T) {
			plainPath(t, e, path, args)
		})
	}

	t.Run("a change the ERP made, but not as approved, is told as made, to the model and on the page", func(t *testing.T) {
		// The ERP rounds the price: the order exists, with another price
		// than the page showed. Told as a failure ("not carried out"), it
		// would invite a second order.
		c := e.connectWriter(t, e.Alice, pathPlain)
		n, _ := args()
		a := e.RoundedArgs(n)
		var link string
		e.noWrite(t, "the proposal", func() { link = e.approvalRequired(t, callTool(t, c.cs, e.CreateTool, a)) })
		e.approve(t, link, e.Alice)
		e.oneWrite(t, "the same call after approval", func() {
			r := callTool(t, c.cs, e.CreateTool, a)
			if !r.IsError || r.errorCode() != "INVALID_ARGUMENT" || !strings.Contains(errorMessage(r), "not as approved") || !strings.Contains(errorMessage(r), "approved "+e.RoundedPrice) {
				t.Errorf("the rounded order is told as %s", r.Text)
			}
		})
		if got := e.actionStatus(t, link); got != "executed" {
			t.Errorf("the action of a change the ERP made is %q", got)
		}
		page := pageText(e.decide(t, link, e.Alice, "approve").Body)
		for _, want := range []string{"carried out", "not as approved"} {
			if !strings.Contains(page, want) {
				t.Errorf("the approval page does not say %q: %s", want, page)
			}
		}
		if strings.Contains(page, "not carried out") || strings.Contains(page, "failed") {
			t.Errorf("the approval page tells a change the ERP made as failed: %s", page)
		}
		e.noWrite(t, "the same call again", func() {
			r := callTool(t, c.cs, e.CreateTool, a)
			if msg := errorMessage(r); !strings.Contains(msg, "was made") || !strings.Contains(msg, "not as approved") {
				t.Errorf("the call after the write does not say the change was made, not as approved: %s", r.Text)
			}
		})
	})

	plain := e.connectWriter(t, e.Alice, pathPlain)
	manual := e.connectWriter(t, e.Alice, pathManualMRTR)
	propose := func(t *testing.T, c *writeClient, a map[string]any) string {
		t.Helper()
		var link string
		e.noWrite(t, "the proposal", func() { link = e.approvalRequired(t, callTool(t, c.cs, e.CreateTool, a)) })
		return link
	}
	refused := func(t *testing.T, what string, r toolResult, codes ...string) {
		t.Helper()
		for _, c := range codes {
			if r.IsError && r.errorCode() == c {
				return
			}
		}
		t.Errorf("%s: want %v, got %s", what, codes, r.Text)
	}

	t.Run("a forged approved argument is refused with no write", func(t *testing.T) {
		_, a := args()
		for _, forged := range []map[string]any{{"approved": true}, {"confirm": true}, {"approval": "approved"}} {
			f := clone(a)
			for k, v := range forged {
				f[k] = v
			}
			e.noWrite(t, "forged argument", func() {
				refused(t, "forged argument", callTool(t, plain.cs, e.CreateTool, f), "INVALID_ARGUMENT")
			})
		}
	})

	t.Run("an approval id the model made up is refused with no write", func(t *testing.T) {
		_, a := args()
		made := uuid.NewString()
		f := clone(a)
		f["approval_id"] = made
		e.noWrite(t, "a made-up approval id as an argument", func() {
			refused(t, "approval id argument", callTool(t, plain.cs, e.CreateTool, f), "INVALID_ARGUMENT")
		})
		// A bare id, and the JSON a model might guess the state to be.
		for _, state := range []string{made, base64.RawURLEncoding.EncodeToString([]byte(`{"action_id":"` + made + `"}`))} {
			e.noWrite(t, "a made-up requestState", func() {
				res, err := callRaw(manual.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: a, RequestState: state, InputResponses: acceptApproval()})
				if err != nil {
					t.Fatalf("made-up requestState: %v", err)
				}
				refused(t, "made-up requestState", decodeToolResult(t, e.CreateTool, res), "APPROVAL_INVALID")
			})
		}
	})

	t.Run("a tampered or replayed requestState is refused with no write", func(t *testing.T) {
		_, a := args()
		var first *mcp.CallToolResult
		e.noWrite(t, "the proposal", func() {
			var err error
			first, err = callRaw(manual.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: a})
			if err != nil {
				t.Fatal(err)
			}
		})
		el := inputRequired(t, e, first)
		e.approve(t, el.URL, e.Alice)
		accept := acceptApproval()
		tampered := []byte(first.RequestState)
		tampered[len(tampered)/2] ^= 1
		e.noWrite(t, "a tampered requestState", func() {
			res, err := callRaw(manual.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: a, RequestState: string(tampered), InputResponses: accept})
			if err != nil {
				t.Fatal(err)
			}
			refused(t, "tampered requestState", decodeToolResult(t, e.CreateTool, res), "APPROVAL_INVALID")
		})
		e.noWrite(t, "another user's call with Alice's requestState", func() {
			bob := e.connectWriter(t, e.Bob, pathManualMRTR)
			res, err := callRaw(bob.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: a, RequestState: first.RequestState, InputResponses: accept})
			if err != nil {
				t.Fatal(err)
			}
			refused(t, "Bob with Alice's requestState", decodeToolResult(t, e.CreateTool, res), "APPROVAL_INVALID")
		})
		_, other := args()
		e.noWrite(t, "Alice's requestState with other arguments", func() {
			res, err := callRaw(manual.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: other, RequestState: first.RequestState, InputResponses: accept})
			if err != nil {
				t.Fatal(err)
			}
			refused(t, "requestState for other arguments", decodeToolResult(t, e.CreateTool, res), "APPROVAL_INVALID")
		})
		e.oneWrite(t, "the resumed call", func() {
			res, err := callRaw(manual.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: a, RequestState: first.RequestState, InputResponses: accept})
			if err != nil {
				t.Fatal(err)
			}
			mustSucceed(t, decodeToolResult(t, e.CreateTool, res), "the resumed call")
		})
		e.noWrite(t, "the requestState replayed", func() {
			res, err := callRaw(manual.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: a, RequestState: first.RequestState, InputResponses: accept})
			if err != nil {
				t.Fatal(err)
			}
			refused(t, "replayed requestState", decodeToolResult(t, e.CreateTool, res), "APPROVAL_INVALID")
		})
	})

	t.Run("an approval replayed after it ran makes no second write", func(t *testing.T) {
		_, a := args()
		link := propose(t, plain, a)
		e.approve(t, link, e.Alice)
		e.oneWrite(t, "the approved call", func() { mustSucceed(t, callTool(t, plain.cs, e.CreateTool, a), e.CreateTool) })
		e.noWrite(t, "the same call again", func() {
			r := callTool(t, plain.cs, e.CreateTool, a)
			refused(t, "replay", r, "APPROVAL_INVALID")
			if !strings.Contains(errorMessage(r), "already used") {
				t.Errorf("the replay's refusal does not say the approval was used: %s", r.Text)
			}
		})
		// Told once; the same call after that is a new proposal, with a
		// link of its own.
		e.noWrite(t, "the same call once the replay was told", func() {
			if again := e.approvalRequired(t, callTool(t, plain.cs, e.CreateTool, a)); again == link {
				t.Error("the used action was offered again")
			}
		})
		if page := e.decide(t, link, e.Alice, "approve"); e.actionStatus(t, link) != "executed" {
			t.Errorf("approving a used action again changed it: HTTP %d %s", page.Status, pageText(page.Body))
		}
	})

	t.Run("another user's approval is refused, and another user's call does not use it", func(t *testing.T) {
		_, a := args()
		link := propose(t, plain, a)
		refusedBefore := e.auditCount(t, "write_refused")
		page := e.decide(t, link, e.Bob, "approve")
		if got := e.actionStatus(t, link); got != "proposed" {
			t.Fatalf("Bob's approval of Alice's action left it %q", got)
		}
		if page.Status < 400 && !strings.Contains(strings.ToLower(pageText(page.Body)), "signed in") {
			t.Errorf("the page did not tell Bob he cannot decide: HTTP %d %s", page.Status, pageText(page.Body))
		}
		if e.auditCount(t, "write_refused") <= refusedBefore {
			t.Error("no write_refused audit row for Bob's attempt")
		}
		bob := e.connectWriter(t, e.Bob, pathPlain)
		e.noWrite(t, "Bob's identical call", func() {
			if own := e.approvalRequired(t, callTool(t, bob.cs, e.CreateTool, a)); own == link {
				t.Error("Bob's call was given Alice's action")
			}
		})
		e.approve(t, link, e.Alice)
		e.noWrite(t, "Bob's identical call after Alice approved hers", func() {
			e.approvalRequired(t, callTool(t, bob.cs, e.CreateTool, a))
		})
		e.oneWrite(t, "Alice's call", func() { mustSucceed(t, callTool(t, plain.cs, e.CreateTool, a), e.CreateTool) })
	})

	t.Run("an approval given through one AI client is not used by another client of the same user", func(t *testing.T) {
		_, a := args()
		link := propose(t, plain, a)
		browser := e.browser(e.Alice)
		e.approveIn(t, browser, link, e.Alice)
		// Alice's other AI client: an OAuth client of its own, on the
		// same site.
		other := e.connectWriter(t, e.Alice, pathPlain)
		e.noWrite(t, "Alice's identical call through another client", func() {
			if own := e.approvalRequired(t, callTool(t, other.cs, e.CreateTool, a)); own == link {
				t.Error("another client was given the approved action")
			}
		})
		if got := e.actionStatus(t, link); got != "approved" {
			t.Errorf("after the other client's call the approved action is %q", got)
		}
		// 2026-07-28: the first client's requestState sent by another.
		_, b := args()
		first, err := callRaw(manual.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: b})
		if err != nil {
			t.Fatal(err)
		}
		e.approveIn(t, browser, inputRequired(t, e, first).URL, e.Alice)
		otherManual := e.connectWriter(t, e.Alice, pathManualMRTR)
		e.noWrite(t, "another client with the first one's requestState", func() {
			res, err := callRaw(otherManual.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: b, RequestState: first.RequestState, InputResponses: acceptApproval()})
			if err != nil {
				t.Fatal(err)
			}
			r := decodeToolResult(t, e.CreateTool, res)
			refused(t, "another client's requestState", r, "APPROVAL_INVALID")
			if !strings.Contains(errorMessage(r), "another AI client") {
				t.Errorf("the refusal does not say the approval is another client's: %s", r.Text)
			}
		})
		e.oneWrite(t, "the first client's call", func() { mustSucceed(t, callTool(t, plain.cs, e.CreateTool, a), e.CreateTool) })
		e.oneWrite(t, "the first client's resumed call", func() {
			res, err := callRaw(manual.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: b, RequestState: first.RequestState, InputResponses: acceptApproval()})
			if err != nil {
				t.Fatal(err)
			}
			mustSucceed(t, decodeToolResult(t, e.CreateTool, res), "the resumed call")
		})
	})

	t.Run("an approval for other arguments does not write them", func(t *testing.T) {
		_, a := args()
		_, other := args()
		link := propose(t, plain, a)
		e.approve(t, link, e.Alice)
		e.noWrite(t, "the call with other arguments", func() {
			if l := e.approvalRequired(t, callTool(t, plain.cs, e.CreateTool, other)); l == link {
				t.Error("other arguments were given the approved action")
			}
		})
		e.oneWrite(t, "the approved arguments", func() { mustSucceed(t, callTool(t, plain.cs, e.CreateTool, a), e.CreateTool) })
	})

	t.Run("an expired approval is refused with no write", func(t *testing.T) {
		_, a := args()
		link := propose(t, plain, a)
		e.approve(t, link, e.Alice)
		// The gateway's clock cannot be waited for (10 minutes): move the
		// action's expiry into the past instead.
		execSQL(t, e.GW.DBURL, `UPDATE pending_actions SET expires_at = now() - interval '1 second' WHERE id = $1`, actionID(t, link))
		e.noWrite(t, "the expired approval", func() {
			refused(t, "expired", callTool(t, plain.cs, e.CreateTool, a), "APPROVAL_EXPIRED")
		})
		_, b := args()
		link = propose(t, plain, b)
		execSQL(t, e.GW.DBURL, `UPDATE pending_actions SET expires_at = now() - interval '1 second' WHERE id = $1`, actionID(t, link))
		e.decide(t, link, e.Alice, "approve")
		if got := e.actionStatus(t, link); got != "proposed" {
			t.Errorf("an expired proposal was decided: %q", got)
		}
	})

	t.Run("a crash between claim and finish never runs the write again", func(t *testing.T) {
		_, a := args()
		link := propose(t, plain, a)
		e.approve(t, link, e.Alice)
		// What a replica that stopped after its claim leaves behind.
		execSQL(t, e.GW.DBURL, `UPDATE pending_actions SET status = 'executing', executed_at = now() WHERE id = $1`, actionID(t, link))
		for range 2 {
			e.noWrite(t, "a retry of the claimed action", func() {
				r := callTool(t, plain.cs, e.CreateTool, a)
				refused(t, "claimed, never finished", r, "APPROVAL_INVALID")
				if !strings.Contains(errorMessage(r), "Check the ERP") {
					t.Errorf("the refusal does not say to check the ERP: %s", r.Text)
				}
			})
		}
	})

	t.Run("invisible and direction-changing characters in a value are shown on the page, not hidden", func(t *testing.T) {
		// The model asks to set an e-mail address holding a zero-width
		// space and a right-to-left override: a browser draws neither,
		// and the override reverses what follows, so the approver would
		// read another address than the one the ERP would store.
		k, _ := args()
		email := fmt.Sprintf("acc\u200bounts.%d@exa\u202emple.com", k)
		link := e.approvalRequired(t, callTool(t, plain.cs, e.UpdateTool, e.UpdateArgs(email)))
		page := e.decide(t, link, e.Alice, "reject")
		if got := e.actionStatus(t, link); got != "rejected" {
			t.Fatalf("the action is %q; last page HTTP %d: %s", got, page.Status, pageText(page.Body))
		}
		text := html.UnescapeString(page.Body)
		if !strings.Contains(text, fmt.Sprintf(".%d@exa", k)) {
			t.Fatalf("the approver's page does not show the e-mail address: %s", pageText(page.Body))
		}
		for _, c := range []string{"\u200b", "\u202e"} {
			if strings.Contains(page.Body, c) {
				t.Errorf("the approver's page carries %U as is, which the browser does not show as itself", []rune(c)[0])
			}
			if marker := fmt.Sprintf("%U", []rune(c)[0]); !strings.Contains(text, marker) {
				t.Errorf("the approver's page does not name the invisible character %s", marker)
			}
		}
	})

	t.Run("a document changed in the ERP after approval is not written over", func(t *testing.T) {
		k, _ := args()
		mine, bobs := fmt.Sprintf("alice.%d@e2e.example", k), fmt.Sprintf("bob.%d@e2e.example", k)
		link := e.approvalRequired(t, callTool(t, plain.cs, e.UpdateTool, e.UpdateArgs(mine)))
		e.approve(t, link, e.Alice)
		// Bob changes the same customer meanwhile, through his own
		// approved write.
		bob := e.connectWriter(t, e.Bob, pathPlain)
		bl := e.approvalRequired(t, callTool(t, bob.cs, e.UpdateTool, e.UpdateArgs(bobs)))
		e.approve(t, bl, e.Bob)
		mustSucceed(t, callTool(t, bob.cs, e.UpdateTool, e.UpdateArgs(bobs)), "Bob's update")
		refused(t, "changed after approval", callTool(t, plain.cs, e.UpdateTool, e.UpdateArgs(mine)), "APPROVAL_EXPIRED")
		if got := e.CustomerEmail(t); got != bobs {
			t.Errorf("the customer's e-mail is %q, want Bob's %q", got, bobs)
		}
		if got := e.actionStatus(t, link); got != "failed" {
			t.Errorf("Alice's action is %q", got)
		}
	})

	t.Run("a rejected proposal is refused with no write", func(t *testing.T) {
		_, a := args()
		link := propose(t, plain, a)
		e.decide(t, link, e.Alice, "reject")
		if got := e.actionStatus(t, link); got != "rejected" {
			t.Fatalf("the rejected action is %q", got)
		}
		e.noWrite(t, "the rejected call", func() {
			refused(t, "rejected", callTool(t, plain.cs, e.CreateTool, a), "APPROVAL_REJECTED")
		})
	})

	t.Run("2026-07-28: declining the elicitation writes nothing", func(t *testing.T) {
		c := e.connectWriter(t, e.Alice, pathMRTR)
		_, a := args()
		c.onElicit = func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} }
		e.noWrite(t, "the declined call", func() {
			refused(t, "declined", callTool(t, c.cs, e.CreateTool, a), "APPROVAL_REJECTED")
		})
	})

	t.Run("two retries racing after one approval make exactly one ERP write", func(t *testing.T) {
		_, a := args()
		link := propose(t, plain, a)
		e.approve(t, link, e.Alice)
		// Another MCP session of the same client (an approval is bound to
		// the client, not to a session, which erpgate does not keep).
		second := &writeClient{oauthMCPClient: plain.anotherSession(t, e.Site.MCPURL)}
		answers := make([]*mcp.CallToolResult, 2)
		var wg sync.WaitGroup
		start := make(chan struct{})
		e.oneWrite(t, "two racing retries", func() {
			for i, c := range []*writeClient{plain, second} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					res, err := callRaw(c.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: a})
					if err != nil {
						t.Errorf("racing retry: %v", err)
						return
					}
					answers[i] = res
				}()
			}
			close(start)
			wg.Wait()
		})
		ok := 0
		var results []toolResult
		for _, res := range answers {
			if res == nil {
				t.FailNow() // the retry's error is reported above
			}
			results = append(results, decodeToolResult(t, e.CreateTool, res))
		}
		for _, r := range results {
			if !r.IsError {
				ok++
			} else if r.errorCode() != "APPROVAL_INVALID" {
				t.Errorf("the losing retry: %s", r.Text)
			}
		}
		if ok < 1 {
			t.Errorf("no retry succeeded: %+v", results)
		}
	})

	t.Run("a withdrawal racing the retry ends in exactly one of the two", func(t *testing.T) {
		csrfField := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
		outcomes := map[string]int{}
		// Alice's browser: signed in on the first approval, its approval
		// session serves the others (sign-ins are limited per source).
		b := e.browser(e.Alice)
		for round := range 4 {
			_, a := args()
			link := propose(t, plain, a)
			// Alice approves; her browser stays on the page with Withdraw
			// approval.
			page := e.decideIn(t, b, link, "approve")
			token := csrfField.FindStringSubmatch(page.Body)
			if e.actionStatus(t, link) != "approved" || token == nil || !strings.Contains(page.Body, "/withdraw") {
				t.Fatalf("round %d: after approving, HTTP %d: %s", round, page.Status, pageText(page.Body))
			}
			before := e.Orders()
			var (
				wg        sync.WaitGroup
				start     = make(chan struct{})
				res       *mcp.CallToolResult
				callErr   error
				withdrawn *http.Response
				body      []byte
				postErr   error
			)
			wg.Go(func() {
				<-start
				res, callErr = callRaw(plain.cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: a})
			})
			wg.Go(func() {
				<-start
				withdrawn, postErr = b.HC.PostForm(link+"/withdraw", url.Values{"csrf": {token[1]}})
				if postErr == nil {
					body, _ = io.ReadAll(withdrawn.Body)
					withdrawn.Body.Close()
				}
			})
			close(start)
			wg.Wait()
			if callErr != nil || postErr != nil {
				t.Fatalf("round %d: the retry: %v; the withdrawal: %v", round, callErr, postErr)
			}
			r := decodeToolResult(t, e.CreateTool, res)
			status, written := e.actionStatus(t, link), e.Orders()-before
			switch {
			case !r.IsError && status == "executed" && written == 1 &&
				withdrawn.StatusCode == http.StatusConflict && strings.Contains(string(body), "Your approval could not be withdrawn"):
				outcomes["written"]++
			case r.errorCode() == "APPROVAL_REJECTED" && strings.Contains(errorMessage(r), "withdrew the approval") &&
				strings.Contains(errorMessage(r), "nothing was written") && status == "withdrawn" && written == 0 &&
				withdrawn.StatusCode == http.StatusSeeOther:
				outcomes["withdrawn"]++
			default:
				t.Fatalf("round %d: the retry %s; the withdrawal HTTP %d %s; the action %q; %d sales orders written",
					round, r.Text, withdrawn.StatusCode, pageText(string(body)), status, written)
			}
		}
		t.Logf("outcomes: %v", outcomes)
	})

	t.Run("a user the ERP forbids to create sales orders gets PERMISSION_DENIED from the ERP after approval", func(t *testing.T) {
		c := e.connectWriter(t, e.Forbidden, pathPlain)
		_, a := args()
		link := propose(t, c, a)
		e.approve(t, link, e.Forbidden)
		asked := e.OrderWrites()
		e.noWrite(t, "the forbidden user's approved call", func() {
			r := callTool(t, c.cs, e.CreateTool, a)
			refused(t, "forbidden user", r, "PERMISSION_DENIED")
			if !strings.Contains(errorMessage(r), e.ERPRefusal) {
				t.Errorf("PERMISSION_DENIED does not carry the ERP's answer: %s", r.Text)
			}
		})
		if e.OrderWrites() == asked {
			t.Error("the ERP was not asked: PERMISSION_DENIED came from a guess, not from the ERP")
		}
		// The ERP refused it before saving anything: the approval holds
		// (its expiry unchanged) for when an administrator grants the
		// right, and the same call meets the same refusal until then.
		if got := e.actionStatus(t, link); got != "approved" {
			t.Errorf("the action is %q after the ERP refused it, want approved", got)
		}
		e.noWrite(t, "the same call again", func() {
			r := callTool(t, c.cs, e.CreateTool, a)
			refused(t, "forbidden user again", r, "PERMISSION_DENIED")
			if !strings.Contains(errorMessage(r), "approval still holds") {
				t.Errorf("the refusal does not say the approval holds: %s", r.Text)
			}
		})
	})

	t.Run("a service token writes only when the site allows it, with the named approver's approval", func(t *testing.T) {
		svc := connect(t, e.Site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": e.Site.ServiceToken})
		_, a := args()
		e.noWrite(t, "a service-token write without service_writes", func() {
			refused(t, "service token without service_writes", callTool(t, svc, e.CreateTool, a), "PERMISSION_DENIED")
		})
		e.enableWrites(t, e.Alice.ERPUser)
		var link string
		waitFor(t, 10*time.Second, "service_writes in force", func() bool {
			r := callTool(t, svc, e.CreateTool, a)
			if r.errorCode() == "APPROVAL_REQUIRED" {
				link = e.approvalRequired(t, r)
				return true
			}
			time.Sleep(50 * time.Millisecond) // a call less per poll
			return false
		})
		if e.decide(t, link, e.Bob, "approve"); e.actionStatus(t, link) != "proposed" {
			t.Fatalf("someone other than the named approver approved a service-token write")
		}
		e.approve(t, link, e.Alice)
		e.oneWrite(t, "the service token's approved call", func() { mustSucceed(t, callTool(t, svc, e.CreateTool, a), e.CreateTool) })
		e.enableWrites(t, "")
	})

	t.Run("usage and audit events record proposed, approved, rejected, executed and failed", func(t *testing.T) {
		for _, action := range []string{"write_proposed", "write_approved", "write_rejected", "write_executed", "write_failed", "write_refused"} {
			if e.auditCount(t, action) == 0 {
				t.Errorf("no %s row in admin_events", action)
			}
		}
		for _, stage := range []string{"proposed", "approved", "rejected", "executed", "failed", "refused"} {
			waitFor(t, 10*time.Second, "a usage event of approval stage "+stage, func() bool { return e.usageCount(t, stage) > 0 })
		}
		if n := queryInt(t, e.GW.DBURL, `SELECT count(*) FROM usage_events WHERE site_id = $1 AND method = 'approval' AND approval IN ('approved', 'rejected') AND tool = $2`,
			e.Site.ID, e.CreateTool); n == 0 {
			t.Error("the page's decisions are not usage events of method approval for the tool")
		}
		if n := queryInt(t, e.GW.DBURL, `SELECT count(*) FROM admin_events WHERE site_id = $1 AND action = 'write_approved' AND actor_kind = 'erp_user' AND actor = $2`,
			e.Site.ID, e.Alice.ERPUser); n == 0 {
			t.Errorf("no write_approved row names %s", e.Alice.ERPUser)
		}
	})
}

// inputRequired checks that res is an input_required result asking for
// the approval as a URL elicitation, with a requestState, and returns it.
func inputRequired(t *testing.T, e *writeERP, res *mcp.CallToolResult) *mcp.ElicitParams {
	t.Helper()
	if !res.NeedsInput() || res.RequestState == "" {
		t.Fatalf("want input_required with a requestState, got %+v", res)
	}
	ir, ok := res.InputRequests["approval"]
	if !ok || len(res.InputRequests) != 1 {
		t.Fatalf("input requests %v, want one named approval", res.InputRequests)
	}
	el, ok := ir.(*mcp.ElicitParams)
	if !ok {
		t.Fatalf("the approval input request is %T", ir)
	}
	e.checkElicitation(t, el)
	return el
}

// acceptApproval is a client's answer to the approval's input request.
func acceptApproval() mcp.InputResponseMap {
	return mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "accept"}}
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// plainPath: a client that declares no URL elicitation gets
// APPROVAL_REQUIRED with the link, and the same call writes once approved.
func plainPath(t *testing.T, e *writeERP, path string, args func() (int, map[string]any)) {
	t.Helper()
	c := e.connectWriter(t, e.Alice, path)
	k, a := args()
	var link string
	e.noWrite(t, "the proposal", func() { link = e.approvalRequired(t, callTool(t, c.cs, e.CreateTool, a)) })
	if msg := strings.ToLower(errorMessage(callTool(t, c.cs, e.CreateTool, a))); !strings.Contains(msg, "same arguments") {
		t.Errorf("APPROVAL_REQUIRED does not tell the model to call again with the same arguments: %s", msg)
	}
	e.approve(t, link, e.Alice)
	var created map[string]any
	e.oneWrite(t, "the same call after approval", func() {
		created = mustSucceed(t, callTool(t, c.cs, e.CreateTool, a), e.CreateTool)
	})
	e.ReadBack(t, c.cs, created, k)
}
