package approve

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/sites"
)

func testAction(status approval.Status, created time.Time) approval.Action {
	return approval.Action{
		ID:       uuid.New(),
		Key:      approval.Key{SiteID: uuid.New(), AuthType: "oauth", Principal: "ana@example.com", Tool: "update_customer"},
		ClientID: "client-1", Approver: "ana@example.com", Status: status,
		CreatedAt: created, ExpiresAt: created.Add(approval.TTL),
		Preview: connector.Preview{Operation: "update", DocType: "Customer", DocName: "ACME", Summary: "Update ACME.",
			Fields: []connector.PreviewField{{Name: "credit_limit", Label: "Credit limit", Before: "1", HasBefore: true, After: "2"}}},
	}
}

// Each status, before and after the expiry, is shown as the state its
// sentence tells; an approval not run before its expiry is expired.
func TestState(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	before, after := created.Add(time.Minute), created.Add(approval.TTL)
	for _, c := range []struct {
		status        approval.Status
		before, after string
	}{
		{approval.Proposed, stateAwaiting, stateExpired},
		{approval.Approved, stateApproved, stateExpired},
		{approval.Rejected, stateRejected, stateRejected},
		{approval.Withdrawn, stateWithdrawn, stateWithdrawn},
		{approval.Executing, stateExecuting, stateUnknown},
		{approval.Executed, stateExecuted, stateExecuted},
		{approval.Failed, stateFailed, stateFailed},
		{approval.Status("unheard-of"), stateExpired, stateExpired},
	} {
		a := testAction(c.status, created)
		if got := state(a, before); got != c.before {
			t.Errorf("%s before expiry: %s, want %s", c.status, got, c.before)
		}
		if got := state(a, after); got != c.after {
			t.Errorf("%s at expiry: %s, want %s", c.status, got, c.after)
		}
	}
}

// The preview, the proposer and the buttons are for the approver only:
// nobody signed in, and someone signed in as another ERP user, see the
// state and the sign-in button.
func TestViewShowsThePreviewToTheApproverOnly(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	p := pending{action: testAction(approval.Proposed, created), site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}
	for _, user := range []string{"", "bob@example.com", "ANA@example.com"} {
		v := h.view(p, user, "key")
		if v.ShowDetails || v.CanDecide || !v.SignIn || v.Summary != "" || len(v.Fields) != 0 || v.ProposedBy != "" || v.Client != "" {
			t.Errorf("signed in as %q: %+v", user, v)
		}
	}
	v := h.view(p, "ana@example.com", "key")
	if !v.ShowDetails || !v.CanDecide || v.SignIn || v.Summary != "Update ACME." || len(v.Fields) != 1 || !v.HasBefore || v.TimeLeft != "8 minutes" {
		t.Errorf("the approver: %+v", v)
	}
	if v.CSRF == "" || v.CSRF == h.view(pending{action: testAction(approval.Proposed, created), site: p.site}, "ana@example.com", "key").CSRF {
		t.Error("the form token is not bound to the action")
	}
}

// An approved change offers Withdraw approval to the person who approved
// it only; anyone else is offered the sign-in; no other state offers it.
func TestViewOffersWithdrawalToWhoApproved(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	a := testAction(approval.Approved, created)
	a.DecidedBy = "ana@example.com"
	p := pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}
	if v := h.view(p, "ana@example.com", "key"); !v.CanWithdraw || v.SignIn || v.CanDecide || !v.ShowDetails {
		t.Errorf("the approver: %+v", v)
	}
	for _, user := range []string{"", "bob@example.com"} {
		if v := h.view(p, user, "key"); v.CanWithdraw || !v.SignIn || v.ShowDetails {
			t.Errorf("signed in as %q: %+v", user, v)
		}
	}
	for _, status := range []approval.Status{approval.Proposed, approval.Rejected, approval.Withdrawn, approval.Executing, approval.Executed, approval.Failed} {
		p.action.Status = status
		if v := h.view(p, "ana@example.com", "key"); v.CanWithdraw {
			t.Errorf("%s offers Withdraw approval", status)
		}
	}
}

func TestTimeLeft(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Second: "less than a minute", 90 * time.Second: "1 minute", 2 * time.Minute: "2 minutes", 9*time.Minute + 59*time.Second: "9 minutes",
	} {
		if got := timeLeft(d); got != want {
			t.Errorf("timeLeft(%s) = %q, want %q", d, got, want)
		}
	}
}

// A write whose answer from the ERP was lost may have been made: the page
// never tells it as not carried out, and says to check the ERP.
func TestViewOfAWriteWhoseOutcomeIsUnknown(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	a := testAction(approval.Failed, created)
	a.ExecutedAt, a.ErrorCode, a.ErrorMessage = created.Add(time.Minute), "UPSTREAM_TIMEOUT", "the ERP at erp.acme.test did not answer in time"
	v := h.view(pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}, "ana@example.com", "key")
	if strings.Contains(v.Title+v.Sentence, "not carried out") || strings.Contains(v.Sentence, "failed") ||
		!strings.Contains(v.Sentence+" "+v.Next, "Check Frappe/ERPNext") {
		t.Fatalf("a write whose outcome is unknown is shown as %q / %q / %q", v.Title, v.Sentence, v.Next)
	}
	// Why there is no answer, in plain words: never the model's.
	if v.Detail != "Frappe/ERPNext did not answer in time." {
		t.Errorf("a write whose answer did not come in time: %q", v.Detail)
	}
	// A refusal by the ERP is still a failure: nothing was written.
	a.ErrorCode, a.ErrorMessage = "PERMISSION_DENIED", "the ERP refused this change for this user (HTTP 403)"
	if v := h.view(pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}, "ana@example.com", "key"); v.State != stateFailed {
		t.Fatalf("a refused write is shown as %s", v.State)
	}
}

// What the ERP answered a failed write quotes its values (amounts, names,
// documents): like the preview, it is for the approver only, never for
// whoever holds the link.
func TestViewShowsTheERPAnswerToTheApproverOnly(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	const answer = "Credit limit cannot be lower than the outstanding amount 4,000.00 of ACME"
	for _, code := range []string{"INVALID_ARGUMENT", "UPSTREAM_TIMEOUT"} {
		a := testAction(approval.Failed, created)
		a.ExecutedAt, a.ErrorCode, a.ErrorMessage = created.Add(time.Minute), code, answer
		if code == "INVALID_ARGUMENT" {
			// The ERP's refusal: the model's words, and the ERP's own.
			a.ErrorMessage, a.ERPSaid = "the ERP refused the change (ValidationError): "+answer, answer
		}
		p := pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}
		for _, user := range []string{"", "bob@example.com"} {
			if v := h.view(p, user, "key"); strings.Contains(v.Title+v.Sentence+v.Detail+v.Next, "4,000.00") {
				t.Errorf("%s, signed in as %q: the ERP's answer is shown: %q", code, user, v.Detail)
			}
		}
		if code == "UPSTREAM_TIMEOUT" {
			continue // no answer: TestViewOfAWriteWhoseOutcomeIsUnknown
		}
		if v := h.view(p, "ana@example.com", "key"); !strings.Contains(v.Detail, answer) || strings.Contains(v.Detail, "ValidationError") {
			t.Errorf("%s: the approver is not shown the ERP's answer plainly: %q", code, v.Detail)
		}
	}
}

// A failed write is told by its code in plain words, and with the ERP's
// own words when it refused the change; never in the words written for
// the model.
func TestViewOfAFailedWriteInPlainWords(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	for _, c := range []struct{ code, said, want string }{
		{"INVALID_ARGUMENT", "Please enter Delivery Date", "Frappe/ERPNext refused the change, so nothing was written. It said: “Please enter Delivery Date”"},
		{"PERMISSION_DENIED", "", "Frappe/ERPNext does not allow this ERP user to make the change, so nothing was written."},
		{"APPROVAL_EXPIRED", "", "The document changed in Frappe/ERPNext after the change was approved, so nothing was written."},
		{"SOMETHING_NEW", "No.", "Frappe/ERPNext refused the change. It said: “No.”"},
		{"SOMETHING_NEW", "", ""},
	} {
		a := testAction(approval.Failed, created)
		a.ExecutedAt, a.ErrorCode, a.ErrorMessage, a.ERPSaid = created.Add(time.Minute), c.code, "the model's words (HTTP 417)", c.said
		if v := h.view(pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}, "ana@example.com", "key"); v.Detail != c.want {
			t.Errorf("%s %q: %q, want %q", c.code, c.said, v.Detail, c.want)
		}
	}
}

// A write claimed but never finished (its replica stopped) is not "being
// carried out now" forever: once its approval ran out, the page says its
// outcome is not known, as the engine tells its caller.
func TestViewOfAWriteThatNeverFinished(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	a := testAction(approval.Executing, created)
	a.ExecutedAt = created.Add(time.Minute)
	site := sites.Site{DisplayName: "Acme", Kind: "frappe"}
	for _, c := range []struct {
		at    time.Time
		state string
	}{{created.Add(2 * time.Minute), stateExecuting}, {created.Add(approval.TTL + time.Hour), "unknown"}} {
		h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return c.at }}
		v := h.view(pending{action: a, site: site}, "ana@example.com", "key")
		if v.State != c.state || (c.state != stateExecuting && strings.Contains(v.Sentence, "now")) {
			t.Errorf("at %s: %s %q, want %s", c.at.Sub(created), v.State, v.Sentence, c.state)
		}
	}
}

// A write the ERP made, but not as approved (it rounded a price), is told
// as carried out, never as failed: "not carried out" would invite making
// it again. What differs quotes the ERP's values: for the approver only.
func TestViewOfAWriteMadeNotAsApproved(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	const answer = "the ERP created draft Sales Order SAL-ORD-2026-00035, but not as approved: line 1 rate 10.01, approved 10.005"
	a := testAction(approval.Executed, created)
	a.ExecutedAt, a.ErrorCode, a.ErrorMessage = created.Add(time.Minute), "INVALID_ARGUMENT", answer
	a.ERPSaid = "draft Sales Order SAL-ORD-2026-00035 with line 1's rate 10.01 where you approved 10.005"
	p := pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}
	for _, user := range []string{"", "bob@example.com", "ana@example.com"} {
		v := h.view(p, user, "key")
		words := v.Title + " " + v.Sentence + " " + v.Next
		if v.State != stateExecuted || !strings.Contains(words, "carried out") || !strings.Contains(words, "not as approved") ||
			strings.Contains(words, "not carried out") || strings.Contains(words, "failed") {
			t.Errorf("signed in as %q: %s: %q", user, v.State, words)
		}
		if shown := strings.Contains(v.Detail, "10.005"); shown != (user == "ana@example.com") {
			t.Errorf("signed in as %q: the ERP's answer shown %v: %q", user, shown, v.Detail)
		}
	}
}

// A write the ERP made, but not as approved, is told in plain words: what
// the ERP saved otherwise, as the connector says it for people
// (approval.Action.ERPSaid), never the model's words ("What erpgate saw:
// the ERP created draft Sales Order … (http://…), but not as approved: …
// correct or delete it"); with no such words, the sentence alone.
func TestViewOfAWriteMadeNotAsApprovedInPlainWords(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	for _, c := range []struct{ said, want string }{
		{"draft Sales Order SAL-ORD-2026-00035 with line 1's rate 10.01 where you approved 10.005",
			"Frappe/ERPNext saved draft Sales Order SAL-ORD-2026-00035 with line 1's rate 10.01 where you approved 10.005."},
		{"", ""},
	} {
		a := testAction(approval.Executed, created)
		a.ExecutedAt, a.ErrorCode, a.ERPSaid = created.Add(time.Minute), "INVALID_ARGUMENT", c.said
		a.ErrorMessage = "the ERP created draft Sales Order SAL-ORD-2026-00035 (http://erp.test/app/sales-order/SAL-ORD-2026-00035), but not as approved: line 1 rate 10.01, approved 10.005. It is a draft: check it in the ERP, and correct or delete it"
		v := h.view(pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}, "ana@example.com", "key")
		if v.Detail != c.want {
			t.Errorf("%q: %q, want %q", c.said, v.Detail, c.want)
		}
	}
}

// A variation selector (U+FE00–FE0F, U+E0100–E01EF, and Mongolian's
// U+180B–180D, U+180F) is a default-ignorable character no browser draws:
// a customer "Acme Corp" and one named "Acme Corp" with one after a
// letter read the same. The page shows each as [U+…] and warns, as it
// does zero-width spaces.
func TestViewShowsVariationSelectors(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	a := testAction(approval.Proposed, created)
	a.Preview.Fields = []connector.PreviewField{
		{Name: "customer", Label: "Customer", After: "Acme\ufe0f Corp"},
		{Name: "po_no", Label: "PO", After: "PO-1\U000E0100"},
		{Name: "note", Label: "Note", After: "a\u180bb\u180fc"},
	}
	v := h.view(pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}, "ana@example.com", "key")
	for i, want := range []string{"Acme[U+FE0F] Corp", "PO-1[U+E0100]", "a[U+180B]b[U+180F]c"} {
		if i >= len(v.Fields) || v.Fields[i].After != want {
			t.Errorf("field %d shows %+q, want %q", i, v.Fields[min(i, len(v.Fields)-1)].After, want)
		}
	}
	if !slices.Contains(v.Warnings, hiddenWarning) {
		t.Errorf("no warning of hidden characters: %q", v.Warnings)
	}
}

// A record named wholly in letters of another script that pass for Latin
// ones (a customer "АСМЕ" in Cyrillic capitals next to the real "ACME", an
// id "С000001" with a Cyrillic С) mixes no scripts, yet reads as the
// Latin name: the page warns of it as of a mixed one. A name in another
// script with letters of its own (Иванов) is no look-alike.
func TestViewWarnsOfANameWhollyInLookalikeLetters(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	view := func(values ...string) []string {
		a := testAction(approval.Proposed, created)
		a.Preview.Fields = nil
		for _, v := range values {
			a.Preview.Fields = append(a.Preview.Fields, connector.PreviewField{Name: "customer", Label: "Customer", After: v})
		}
		return h.view(pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}, "ana@example.com", "key").Warnings
	}
	for _, c := range []struct{ value, script string }{
		{"\u0410\u0421\u041c\u0415", "Cyrillic"},                 // АСМЕ
		{"\u0421000001", "Cyrillic"},                             // С000001
		{"\u0391\u0392\u0395 Ltd", ""},                           // mixed with Latin: the mixed warning
		{"\u039a\u039f\u039d\u0391 \u0399\u039d\u039f", "Greek"}, // ΚΟΝΑ ΙΝΟ
	} {
		w := strings.Join(view(c.value), " ")
		if !strings.Contains(w, "“"+c.value+"”") {
			t.Errorf("%+q: no warning quotes it: %q", c.value, w)
		}
		if c.script != "" && !strings.Contains(w, c.script) {
			t.Errorf("%+q: the warning does not name %s: %q", c.value, c.script, w)
		}
	}
	for _, v := range []string{"\u0418\u0432\u0430\u043d\u043e\u0432", "ACME", "C000001", "Zoë Ltd", "100"} { // Иванов
		if w := view(v); len(w) != 0 {
			t.Errorf("%+q is no look-alike, but the page warns: %q", v, w)
		}
	}
}

// An approved write whose run the ERP refused before running it keeps its
// approval (approval.Store.Release): the page shows it approved and
// waiting again, may still be withdrawn, and tells the approver, in plain
// words, why the first try wrote nothing (the ERP's words are for the
// approver only).
func TestViewOfAnApprovalKeptAfterARunThatWroteNothing(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(2 * time.Minute) }}
	a := testAction(approval.Approved, created)
	a.DecidedBy, a.DecidedAt = "ana@example.com", created.Add(time.Minute)
	a.ErrorCode, a.ERPSaid = "RATE_LIMITED", "A long operation is running for this screen in the current session. Please try again later."
	p := pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "acumatica"}}
	v := h.view(p, "ana@example.com", "key")
	const want = "The first try did not go through: Acumatica was too busy to take the change, so nothing was written. It said: “A long operation is running for this screen in the current session. Please try again later.” The approval still holds."
	if v.State != stateApproved || !v.CanWithdraw || v.Title != "Change approved" || v.Detail != want {
		t.Errorf("approver: state %s, withdraw %v, title %q, detail %q; want approved, withdrawable, detail %q", v.State, v.CanWithdraw, v.Title, v.Detail, want)
	}
	if v := h.view(p, "", "key"); v.State != stateApproved || v.Detail != "" {
		t.Errorf("without sign-in: state %s, detail %q; want approved and no detail", v.State, v.Detail)
	}
}

// A space other than the ordinary one (a no-break space U+00A0, a thin
// space U+2009, an ideographic space U+3000, …) is drawn as a space, yet
// makes another value: a customer "Acme Corp" with a no-break space is
// not the customer "Acme Corp", and a name written with one makes a
// second record that reads as the first. The page shows each as [U+…]
// and warns in words of its own; the ordinary space is shown as itself.
func TestViewShowsSpacesOtherThanTheOrdinaryOne(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	a := testAction(approval.Proposed, created)
	a.Preview.Fields = []connector.PreviewField{
		{Name: "customer", Label: "Customer", After: "Acme\u00a0Corp"},
		{Name: "po_no", Label: "PO", After: "PO\u20091"},
		{Name: "note", Label: "Note", After: "A\u3000B\u202fC D"},
	}
	v := h.view(pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}, "ana@example.com", "key")
	for i, want := range []string{"Acme[U+00A0]Corp", "PO[U+2009]1", "A[U+3000]B[U+202F]C D"} {
		if i >= len(v.Fields) || v.Fields[i].After != want {
			t.Errorf("field %d shows %+q, want %q", i, v.Fields[min(i, len(v.Fields)-1)].After, want)
		}
	}
	if !slices.Contains(v.Warnings, spacesWarning) {
		t.Errorf("no warning of other spaces: %q", v.Warnings)
	}
	if slices.Contains(v.Warnings, hiddenWarning) {
		t.Errorf("spaces warned of as invisible characters: %q", v.Warnings)
	}

	// Ordinary spaces alone: nothing marked, no warning.
	a.Preview.Fields = []connector.PreviewField{{Name: "customer", Label: "Customer", After: "Acme  Corp "}}
	v = h.view(pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}, "ana@example.com", "key")
	if v.Fields[0].After != "Acme  Corp " || slices.Contains(v.Warnings, spacesWarning) {
		t.Errorf("ordinary spaces shown as %q, warnings %q", v.Fields[0].After, v.Warnings)
	}
}

// The braille pattern blank (U+2800) is a symbol, not a space, yet fonts
// draw it as an empty cell the width of a letter: "Acme⠀Corp" reads as
// "Acme Corp", a second record passing for the first, as a no-break
// space's does. The page shows it as [U+2800] and warns of it with the
// other spaces.
func TestViewShowsTheBraillePatternBlank(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	h := &Handler{deps: Deps{Registry: connector.NewRegistry()}, now: func() time.Time { return created.Add(90 * time.Second) }}
	a := testAction(approval.Proposed, created)
	a.Preview.Fields = []connector.PreviewField{{Name: "customer", Label: "Customer", After: "Acme\u2800Corp"}}
	v := h.view(pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}, "ana@example.com", "key")
	if got := v.Fields[0].After; got != "Acme[U+2800]Corp" {
		t.Errorf("the customer shows as %+q, want %q", got, "Acme[U+2800]Corp")
	}
	if !slices.Contains(v.Warnings, spacesWarning) {
		t.Errorf("no warning of other spaces: %q", v.Warnings)
	}
	// A braille letter is drawn as dots: no mark, no warning.
	a.Preview.Fields = []connector.PreviewField{{Name: "note", Label: "Note", After: "\u2801\u2803"}}
	v = h.view(pending{action: a, site: sites.Site{DisplayName: "Acme", Kind: "frappe"}}, "ana@example.com", "key")
	if v.Fields[0].After != "\u2801\u2803" || len(v.Warnings) != 0 {
		t.Errorf("braille letters shown as %+q, warnings %q", v.Fields[0].After, v.Warnings)
	}
}
