package approve

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/web/pagekit"
)

// The states the page shows, each with its own sentence.
const (
	stateAwaiting  = "awaiting"
	stateApproved  = "approved"
	stateExecuting = "executing"
	stateRejected  = "rejected"
	stateWithdrawn = "withdrawn"
	stateExecuted  = "executed"
	stateFailed    = "failed"
	stateExpired   = "expired"
	// stateUnknown: failed in a way that says nothing of whether the ERP
	// made the change (approval.OutcomeUnknown).
	stateUnknown = "unknown"
)

// kindNames are the kinds of ERP as people call them.
var kindNames = map[string]string{"frappe": "Frappe/ERPNext", "acumatica": "Acumatica"}

func kindName(kind string) string {
	if n, ok := kindNames[kind]; ok {
		return n
	}
	return kind
}

// fieldView is one row of the fields table.
type fieldView struct {
	Label, Name, Before, After string
	HasBefore, Changed         bool
}

// view is what approve.html and decided.html show. Every value is text
// that html/template escapes: a value from the ERP or the model's
// arguments can never become markup.
type view struct {
	ID, Title, State string
	SiteName, ERP    string
	// Sentence says where the change stands; Detail adds to it (a
	// failure's reason); Next says what to do now.
	Sentence, Detail, Next string
	// ToolTitle names the write tool; Operation what it does.
	ToolTitle, Tool, Operation string
	// Signed-in approver only: the preview and who proposed it.
	ShowDetails               bool
	DocType, DocName, Summary string
	Fields                    []fieldView
	HasBefore                 bool
	Tables                    []connector.PreviewTable
	Warnings                  []string
	ProposedBy, Client        string
	// Actor is who carries the change out once approved: "your AI
	// assistant", or "the program" for a service token's proposal, whose
	// approver has no AI assistant in it.
	Actor string
	// ClientName is the name the OAuth client registered itself under:
	// its own words, shown as such next to its id.
	ClientName                 string
	Created, Expires, TimeLeft string
	// CanDecide shows the Approve and Reject buttons; CanWithdraw the
	// Withdraw approval button; SignIn the sign-in button (to decide, or
	// to withdraw when Approved). SignedInAs is the approval session's
	// user.
	CanDecide, CanWithdraw, SignIn bool
	Approved                       bool
	SignedInAs                     string
	CSRF                           string
	// Notice says why what the person just asked for was not done (a
	// withdrawal too late); Done says that it was (signed out
	// everywhere).
	Notice, Done string
}

// URL is an action path of this page (ID names the action as the link
// that opened it did).
func (v view) URL(path string) string { return "/approve/" + v.ID + path }

// show answers GET /approve/{id}.
func (h *Handler) show(w http.ResponseWriter, r *http.Request, raw string) {
	p, ok := h.load(w, r, raw)
	if !ok {
		return
	}
	key := h.deps.Kit.EnsureBinding(w, r, csrfCookie, csrfLifetime)
	user, _, err := h.session(r, p.site)
	if err != nil {
		h.internalError(w, "check the approval session", err)
		return
	}
	if user != "" && user == p.action.Approver && p.action.Key.AuthType == "oauth" && p.action.ClientID != "" {
		name, err := h.deps.Sites.ClientName(r.Context(), p.action.ClientID)
		if err != nil {
			h.log.Warn("read the client's name for the approval page", zap.Error(err))
		}
		p.clientName = name
	}
	v := h.view(p, user, key)
	if q := r.URL.Query(); user == "" && q.Get("done") == doneSignedOutEverywhere &&
		pagekit.CheckNotice(key, noticePurpose(p.action.ID, doneSignedOutEverywhere), q.Get("check")) {
		v.Done = "You are signed out of " + p.site.DisplayName + "'s approval pages in this browser and in every other one you signed in with. " +
			"Nobody can use those sign-ins to approve or reject a change any more."
	}
	h.render(w, http.StatusOK, h.page, v, p.site)
}

// view builds the page of p for the person signed in as user ("" for
// nobody) in the browser whose CSRF key is key.
//
// The preview (the ERP's values, the document, who proposed it) is shown
// only to the approver, signed in through the ERP. The link travels
// through the model and the AI client and may be pasted anywhere; whoever
// holds it learns only that a change of this kind waits on this site.
func (h *Handler) view(p pending, user, key string) view {
	a, now := p.action, h.now()
	v := view{
		ID: p.linkID(), SiteName: p.site.DisplayName, ERP: kindName(p.site.Kind),
		Tool: a.Key.Tool, ToolTitle: h.toolTitle(p.site.Kind, a.Key.Tool), Operation: operationWords(a.Preview.Operation),
		CSRF: pagekit.CSRFToken(key, csrfPurpose(a.ID)),
	}
	v.State = state(a, now)
	service := a.Key.AuthType == "service_token"
	v.Actor = "your AI assistant"
	if service {
		v.Actor = "the program"
	}
	v.Title, v.Sentence, v.Detail = stateWords(v.State, a, v.ERP)
	v.Next = nextWords(v.State, service)
	approver := user != "" && user == a.Approver
	if user != "" {
		v.SignedInAs = user
	}
	if approver {
		// Every value shown comes from the model's arguments, the ERP or
		// the client's registration: hidden characters are shown
		// (shown.go).
		var sh shower
		v.ShowDetails = true
		v.DocType, v.DocName, v.Summary = sh.text(a.Preview.DocType), sh.text(a.Preview.DocName), sh.sentence(a.Preview.Summary)
		for _, f := range a.Preview.Fields {
			label := f.Label
			if label == "" {
				label = f.Name
			}
			v.Fields = append(v.Fields, fieldView{Label: sh.text(label), Name: sh.text(f.Name), Before: sh.text(f.Before), After: sh.text(f.After),
				HasBefore: f.HasBefore, Changed: !f.HasBefore || f.Before != f.After})
			v.HasBefore = v.HasBefore || f.HasBefore
		}
		v.Tables = sh.tables(a.Preview.Tables)
		for _, w := range a.Preview.Warnings {
			v.Warnings = append(v.Warnings, sh.sentence(w))
		}
		v.ProposedBy = sh.sentence(proposer(a))
		if !service { // a service token's id is named in ProposedBy; it is no AI client
			v.Client, v.ClientName = sh.text(a.ClientID), sh.text(p.clientName)
		}
		v.Created, v.Expires = stamp(a.CreatedAt), stamp(a.ExpiresAt)
		v.Detail = sh.sentence(v.Detail)
		v.Warnings = append(sh.warnings(), v.Warnings...)
	} else {
		// What the ERP answered quotes its values, like the preview.
		v.Detail = ""
	}
	switch v.State {
	case stateAwaiting:
		v.TimeLeft = timeLeft(a.ExpiresAt.Sub(now))
		v.CanDecide, v.SignIn = approver, !approver
	case stateApproved:
		// Only the person who approved it may take the approval back
		// (the approver, who decided it: the store checks both).
		v.Approved = true
		v.CanWithdraw = approver && a.DecidedBy == user
		v.SignIn = !v.CanWithdraw
	}
	return v
}

// state is where a stands at now, as the page tells it.
func state(a approval.Action, now time.Time) string {
	switch a.Status {
	case approval.Proposed:
		if a.Expired(now) {
			return stateExpired
		}
		return stateAwaiting
	case approval.Approved:
		if a.Expired(now) {
			return stateExpired
		}
		return stateApproved
	case approval.Executing:
		if a.Expired(now) {
			// Claimed and never finished (its replica stopped): the
			// engine tells every retry its outcome is not known.
			return stateUnknown
		}
		return stateExecuting
	case approval.Rejected:
		return stateRejected
	case approval.Withdrawn:
		return stateWithdrawn
	case approval.Executed:
		return stateExecuted
	case approval.Failed:
		if a.OutcomeUnknown() {
			return stateUnknown
		}
		return stateFailed
	}
	return stateExpired
}

// stateWords are the page's title, its sentence and a detail for state.
func stateWords(state string, a approval.Action, erp string) (title, sentence, detail string) {
	switch state {
	case stateAwaiting:
		return "Approve a change", "This change waits for your approval. Nothing has been written to " + erp + " yet.", ""
	case stateApproved:
		if a.Key.AuthType == "service_token" {
			return "Change approved", "This change is approved. The program carries it out when it calls again; nothing has been written yet.", keptWords(a, erp)
		}
		return "Change approved", "This change is approved. Your AI assistant carries it out when it calls again; nothing has been written yet.", keptWords(a, erp)
	case stateExecuting:
		return "Change being carried out", "This change was approved and is being carried out in " + erp + " now.", ""
	case stateRejected:
		return "Change rejected", "This change was rejected. Nothing was written to " + erp + ".", ""
	case stateWithdrawn:
		return "Approval withdrawn", "The approval of this change was withdrawn before it was carried out. Nothing was written to " + erp + ".", ""
	case stateExecuted:
		if a.NotAsApproved() {
			return "Change carried out, not as approved", "This change was approved and carried out in " + erp + " on " + stamp(a.ExecutedAt) +
				", but not as approved: " + erp + " saved it with other values than the ones you approved. Check it in " + erp + ".", differsWords(a, erp)
		}
		return "Change carried out", "This change was approved and carried out in " + erp + " on " + stamp(a.ExecutedAt) + ".", ""
	case stateFailed:
		return "Change not carried out", "This change was approved, but it failed when it was carried out in " + erp + ".", failedWords(a, erp)
	case stateUnknown:
		return "Outcome not known", "This change was approved and erpgate began carrying it out in " + erp + " on " + stamp(a.ExecutedAt) +
			", but did not get " + erp + "'s answer: the change may have been made. Check " + erp + " before you ask for it again.", unknownWords(a, erp)
	}
	if a.Key.AuthType == "service_token" {
		return "Approval expired", "This change expired before it was carried out. Nothing was written to " + erp + ". The program must propose it again.", ""
	}
	return "Approval expired", "This change expired before it was carried out. Nothing was written to " + erp + ". Ask your AI assistant to propose it again.", ""
}

// failedWords says why a failed, in plain words by its code, and quotes
// what the ERP said when it refused the change (approval.Action.ERPSaid).
// The error's message was written for the model (the ERP's exception
// class, "call the tool again"): the page never shows it.
func failedWords(a approval.Action, erp string) string {
	var why string
	switch toolerr.Code(a.ErrorCode) {
	case toolerr.InvalidArgument:
		why = erp + " refused the change, so nothing was written."
	case toolerr.PermissionDenied:
		why = erp + " does not allow this ERP user to make the change, so nothing was written."
	case toolerr.NotFound:
		why = erp + " did not find what the change is for, so nothing was written."
	case toolerr.ApprovalExpired:
		why = "The document changed in " + erp + " after the change was approved, so nothing was written."
	case toolerr.AuthExpired:
		why = "The sign-in to " + erp + " had ended, so nothing was written."
	case toolerr.RateLimited:
		why = erp + " was too busy to take the change, so nothing was written."
	case toolerr.ApprovalInvalid:
		why = "erpgate could not check the change against what was approved, so nothing was written."
	}
	if a.ERPSaid == "" {
		return why
	}
	if why == "" {
		why = erp + " refused the change."
	}
	return why + " It said: “" + a.ERPSaid + "”"
}

// keptWords says why an approved change's first try wrote nothing, when
// one did (approval.Store.Release kept its code and the ERP's words), and
// that the approval holds; "" when it was not tried.
func keptWords(a approval.Action, erp string) string {
	if a.ErrorCode == "" {
		return ""
	}
	why := failedWords(a, erp)
	if why == "" {
		why = "nothing was written."
	}
	return "The first try did not go through: " + why + " The approval still holds."
}

// differsWords says what the ERP saved otherwise than approved, in the
// words the connector wrote for people (approval.Action.ERPSaid: the
// document and each difference). The error's message was written for the
// model (the ERP's API field names, a link, "correct or delete it"): the
// page never shows it.
func differsWords(a approval.Action, erp string) string {
	if a.ERPSaid == "" {
		return ""
	}
	return erp + " saved " + strings.TrimSuffix(a.ERPSaid, ".") + "."
}

// unknownWords says, by a's code, why erpgate has no answer from the ERP
// to a write it sent. The error's message was written for the model, of
// any call ("HTTP 502", "which does not mean there are no records"): the
// page never shows it.
func unknownWords(a approval.Action, erp string) string {
	switch toolerr.Code(a.ErrorCode) {
	case toolerr.UpstreamTimeout:
		return erp + " did not answer in time."
	case toolerr.UpstreamUnavailable:
		return erp + ", or a server in front of it, failed before its answer came."
	case toolerr.UpstreamInvalidResponse:
		return erp + "'s answer could not be read."
	case toolerr.ResponseTooLarge:
		return erp + "'s answer was too large to read."
	case toolerr.Internal:
		return "erpgate failed while it waited for " + erp + "'s answer."
	}
	return ""
}

// nextWords says what to do after the page, by state; for a service
// token's proposal (service), the approver has no AI assistant to go back
// to.
func nextWords(state string, service bool) string {
	if service {
		switch state {
		case stateApproved, stateRejected, stateWithdrawn, stateExecuted, stateFailed:
			return "Nothing more to do here: the program that proposed it is told when it calls again."
		case stateUnknown:
			return "Look for the change in the ERP before it is proposed again."
		}
		return ""
	}
	switch state {
	case stateApproved, stateRejected:
		return "Go back to your AI assistant. It will continue on its own, or you can ask it to try again."
	case stateWithdrawn:
		return "Go back to your AI assistant: it is told the approval was withdrawn. It can propose the change again if you ask it to."
	case stateExecuted, stateFailed:
		return "Go back to your AI assistant: it has the ERP's answer."
	case stateUnknown:
		return "Look for the change in the ERP; ask your AI assistant to propose it again only if it is not there."
	}
	return ""
}

// operationWords says what a preview's operation does.
func operationWords(op string) string {
	switch op {
	case "create":
		return "Create a document"
	case "update":
		return "Change a document"
	case "comment":
		return "Add a comment to a document"
	case "submit":
		return "Submit a document (cannot be undone)"
	}
	return op
}

// toolTitle is the write tool's title in the catalogue, or its name.
func (h *Handler) toolTitle(kind, name string) string {
	for _, t := range h.deps.Registry.Tools(kind) {
		if t.Name == name && t.Title != "" {
			return t.Title
		}
	}
	return name
}

// proposer says who proposed a: the ERP user an AI assistant acted for,
// or a program with a service token.
func proposer(a approval.Action) string {
	if a.Key.AuthType == "service_token" {
		return "a program using a service token of the site (token id " + a.Key.Principal + ")"
	}
	return a.Key.Principal + ", through their AI assistant"
}

// timeLeft says how long until an expiry d away.
func timeLeft(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < 2*time.Minute:
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", int(d/time.Minute))
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
