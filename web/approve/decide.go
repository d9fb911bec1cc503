package approve

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/platform/store/usage"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

// beginSignIn answers the sign-in form: the browser goes to the ERP to
// sign in with the site's OAuth client, to say who it is.
func (h *Handler) beginSignIn(w http.ResponseWriter, r *http.Request, raw string) {
	if h.limited(w, r, h.signIns, "sign-in") {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	p, ok := h.load(w, r, raw)
	if !ok || !h.checkForm(w, r, p) {
		return
	}
	if st := state(p.action, h.now()); st != stateAwaiting && st != stateApproved {
		// Decided (and no longer withdrawable) or expired meanwhile: the
		// page says so.
		http.Redirect(w, r, h.pageURL(p), http.StatusSeeOther)
		return
	}
	if err := h.deps.Proofs.Begin(w, r, Purpose, p.linkID()); err != nil {
		h.beginFailed(w, p, err)
	}
}

// beginFailed explains a sign-in that could not start.
func (h *Handler) beginFailed(w http.ResponseWriter, p pending, err error) {
	var e *siteadmin.Error
	if errors.As(err, &e) && e.Kind == siteadmin.Conflict {
		h.renderError(w, http.StatusConflict, pagekit.ErrorPage{
			Title:   "This site has no sign-in through its ERP",
			Message: "Approving a change takes a sign-in at " + kindName(p.site.Kind) + " through the site's OAuth client, and " + p.site.DisplayName + " has none. Nothing was approved.",
			Next:    "Ask your erpgate operator or the site's owner to set the site's OAuth client.",
		})
		return
	}
	ref := pagekit.NewReference()
	h.log.Error("approval sign-in did not start", zap.String("reference", ref), zap.Error(err))
	h.renderError(w, http.StatusBadGateway, pagekit.ErrorPage{
		Title:     "The sign-in at your ERP could not start",
		Message:   "erpgate could not send you to your ERP to sign in. Nothing was approved or rejected.",
		Next:      "Try again in a moment from the approval page (" + h.pageURL(p) + "). If it keeps happening, tell your erpgate operator.",
		Reference: ref,
	})
}

// signInTarget is what an approval's sign-in signs in with: the site's
// own OAuth client, the one people's AI assistants sign in with.
func (h *Handler) signInTarget(ctx context.Context, ref string) (erpadmin.Target, error) {
	p, err := h.lookup(ctx, ref)
	if err != nil {
		return erpadmin.Target{}, err
	}
	csite, client, err := h.deps.Admin.OAuthClient(ctx, p.site)
	if err != nil {
		return erpadmin.Target{}, err
	}
	return erpadmin.Target{SiteID: p.site.ID, Kind: p.site.Kind, Site: csite, Client: client, CallbackPath: p.site.CallbackPath()}, nil
}

// signInDone gives the action's approver an approval session, and nobody
// else.
func (h *Handler) signInDone(w http.ResponseWriter, r *http.Request, ref string, proof erpadmin.Proof, err error) {
	if ref == "" {
		h.proofFailed(w, nil, err)
		return
	}
	p, lerr := h.lookup(r.Context(), ref)
	switch {
	case errors.Is(lerr, approval.ErrNotFound), errors.Is(lerr, sites.ErrNotFound):
		h.invalidLink(w)
		return
	case lerr != nil:
		h.internalError(w, "load pending action after sign-in", lerr)
		return
	}
	if err != nil {
		h.log.Info("approval sign-in did not complete", zap.String("site_slug", p.site.Slug), zap.Error(err))
		h.proofFailed(w, &p, err)
		return
	}
	if proof.User.ID != p.action.Approver {
		h.recordRefusal(r.Context(), p, proof.User.ID)
		h.wrongUser(w, p, proof.User.ID)
		return
	}
	if err := h.startSession(w, r, p.site, proof.User.ID); err != nil {
		h.internalError(w, "start the approval session", err)
		return
	}
	http.Redirect(w, r, h.pageURL(p), http.StatusSeeOther)
}

// recordRefusal audits a sign-in as someone other than the approver (the
// store audits the refusals it decides itself).
func (h *Handler) recordRefusal(ctx context.Context, p pending, user string) {
	if user == "" {
		user = "unknown ERP user"
	}
	actor := siteadmin.Actor{Kind: siteadmin.ActorKind(approval.ActorERPUser), Name: user}
	details := map[string]any{"action_id": p.action.ID.String(), "tool": p.action.Key.Tool, "step": "sign_in", "approver": p.action.Approver}
	h.deps.Admin.Record(ctx, actor, p.site.ID, p.site.Slug, approval.EventRefused, details,
		siteadmin.Refusal(siteadmin.Rejected, "signed in as an ERP user who is not the approver of this change"))
}

// wrongUser is the page of a person signed in as someone other than the
// approver.
//
// It names the person signed in (they know who they are) but not the
// approver: whoever holds the link, signed in as anyone on the ERP,
// would otherwise learn which ERP user (often an e-mail address) asked
// for the change or approves the site's programs' changes. The rightful
// approver knows who they are without being told.
func (h *Handler) wrongUser(w http.ResponseWriter, p pending, user string) {
	who := "the person who asked for it through their AI assistant"
	if p.action.Key.AuthType == "service_token" {
		who = "the ERP user the site's owner named to approve the changes programs propose"
	}
	if state(p.action, h.now()) == stateApproved {
		// Signed in to withdraw an approval that is not theirs.
		h.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
			Title:   "You cannot withdraw this approval",
			Message: "You are signed in to " + p.site.DisplayName + " as " + user + "; only the person who approved this change can withdraw the approval. Nothing was withdrawn.",
			Next:    "If the approval is yours, sign out of " + kindName(p.site.Kind) + " (or open a private window), open the approval page (" + h.pageURL(p) + ") again and sign in as yourself.",
		})
		return
	}
	h.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
		Title:   "You cannot approve this change",
		Message: "You are signed in to " + p.site.DisplayName + " as " + user + "; this change must be approved by " + who + ". Nothing was approved or rejected.",
		Next:    "If the change is yours, sign out of " + kindName(p.site.Kind) + " (or open a private window), open the approval page (" + h.pageURL(p) + ") again and sign in as yourself.",
	})
}

// proofFailed is the page of a sign-in at the ERP that did not complete.
func (h *Handler) proofFailed(w http.ResponseWriter, p *pending, err error) {
	next := "Go back to your AI assistant and open the approval link it gave you again."
	if p != nil {
		next = "Open the approval page (" + h.pageURL(*p) + ") and sign in again."
	}
	page := pagekit.ErrorPage{Title: "The sign-in at your ERP did not complete", Next: next}
	status := http.StatusBadRequest
	const outcome = " Nothing was approved or rejected."
	switch {
	case errors.Is(err, erpadmin.ErrClientRefused):
		page.Message = "Your ERP refused the site's OAuth client." + outcome
		page.Next = "Tell the site's owner or your erpgate operator: the site's OAuth client must be set again."
	case errors.Is(err, erpadmin.ErrCancelled):
		page.Message = "The sign-in was cancelled at your ERP." + outcome
	case errors.Is(err, erpadmin.ErrUnreachable):
		page.Message = "erpgate could not reach your ERP to finish the sign-in." + outcome
		status = http.StatusBadGateway
	case errors.Is(err, erpadmin.ErrState):
		page.Message = "This sign-in expired, was already used, or was opened in another browser than the one that started it." + outcome
	case errors.Is(err, erpadmin.ErrNoIdentity):
		page.Message = "Your ERP did not say who you are." + outcome
		status = http.StatusBadGateway
	default:
		page.Message = "erpgate could not finish the sign-in." + outcome
		page.Reference = pagekit.NewReference()
		h.log.Error("approval sign-in failed", zap.String("reference", page.Reference), zap.Error(err))
		status = http.StatusInternalServerError
	}
	h.renderError(w, status, page)
}

// decide answers the Approve and Reject buttons.
func (h *Handler) decide(w http.ResponseWriter, r *http.Request, raw string) {
	p, user, ok, answered := h.postedBy(w, r, raw, "decision")
	if answered {
		return
	}
	if !ok {
		h.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
			Title:   "Sign in to decide",
			Message: "Your sign-in for approvals on " + p.site.DisplayName + " has ended, or you have not signed in in this browser. Nothing was approved or rejected.",
			Next:    "Open the approval page (" + h.pageURL(p) + "), sign in through your ERP, and decide again.",
		})
		return
	}
	var approve bool
	switch r.PostFormValue("decision") {
	case "approve":
		approve = true
	case "reject":
	default:
		h.renderError(w, http.StatusBadRequest, pagekit.ErrorPage{
			Title:   "This form cannot be sent",
			Message: "The form said neither approve nor reject. Nothing was approved or rejected.",
			Next:    "Open the approval page (" + h.pageURL(p) + ") and press Approve or Reject.",
		})
		return
	}
	a, err := h.deps.Actions.Decide(r.Context(), p.site.ID, p.action.ID, user, approve)
	switch {
	case err == nil:
		h.recordDecision(p, a, user, approve)
		http.Redirect(w, r, h.pageURL(p), http.StatusSeeOther)
	case errors.Is(err, approval.ErrWrongUser):
		h.wrongUser(w, p, user)
	case errors.Is(err, approval.ErrDecided), errors.Is(err, approval.ErrExpired):
		// Decided in another tab, or too late: the page says where it
		// stands.
		p.action = a
		key, _ := h.deps.Kit.Binding(r, csrfCookie)
		h.render(w, http.StatusConflict, h.page, h.view(p, user, key), p.site)
	case errors.Is(err, approval.ErrNotFound):
		h.invalidLink(w)
	default:
		h.internalError(w, "decide", err)
	}
}

// withdraw answers the Withdraw approval button: the person who approved
// the change takes the approval back, unless a call has begun carrying
// it out (the store's conditional update decides which came first).
func (h *Handler) withdraw(w http.ResponseWriter, r *http.Request, raw string) {
	p, user, ok, answered := h.postedBy(w, r, raw, "decision")
	if answered {
		return
	}
	if !ok {
		h.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
			Title:   "Sign in to withdraw",
			Message: "Your sign-in for approvals on " + p.site.DisplayName + " has ended, or you have not signed in in this browser. Nothing was withdrawn.",
			Next:    "Open the approval page (" + h.pageURL(p) + "), sign in through your ERP, and withdraw again.",
		})
		return
	}
	a, err := h.deps.Actions.Withdraw(r.Context(), p.site.ID, p.action.ID, user)
	switch {
	case err == nil:
		h.recordApprovalEvent(p, a, user, string(approval.Withdrawn))
		http.Redirect(w, r, h.pageURL(p), http.StatusSeeOther)
	case errors.Is(err, approval.ErrWrongUser):
		p.action = a
		h.wrongUser(w, p, user)
	case errors.Is(err, approval.ErrNotFound):
		h.invalidLink(w)
	case errors.Is(err, approval.ErrNotApproved), errors.Is(err, approval.ErrDecided), errors.Is(err, approval.ErrWithdrawn),
		errors.Is(err, approval.ErrUsed), errors.Is(err, approval.ErrExpired):
		// Too late (the change began, or ran out), or nothing to
		// withdraw: the page says where the change stands, and why.
		p.action = a
		key, _ := h.deps.Kit.Binding(r, csrfCookie)
		v := h.view(p, user, key)
		v.Notice = withdrawRefusal(err)
		h.render(w, http.StatusConflict, h.page, v, p.site)
	default:
		h.internalError(w, "withdraw", err)
	}
}

// signOut answers the Sign out button: it ends the approval session for
// every replica, a copy of its cookie included, and shows the page again.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, raw string) {
	p, ok := h.posted(w, r, raw, "sign-out")
	if !ok {
		return
	}
	if err := h.sessions.End(w, r, h.now()); err != nil {
		h.internalError(w, "sign out", err)
		return
	}
	http.Redirect(w, r, h.pageURL(p), http.StatusSeeOther)
}

// signOutEverywhere answers the Sign out everywhere button: it ends every
// approval session of the signed-in person on the action's site, in this
// browser and any other (a shared computer, a copied cookie), for every
// replica at once, records it, and shows the page again saying so.
// Another person's sessions, and this person's on other sites, go on.
// Without a session it signs this browser out, as Sign out does.
func (h *Handler) signOutEverywhere(w http.ResponseWriter, r *http.Request, raw string) {
	p, user, signedIn, answered := h.postedBy(w, r, raw, "sign-out")
	if answered {
		return
	}
	if !signedIn {
		if err := h.sessions.End(w, r, h.now()); err != nil {
			h.internalError(w, "sign out", err)
			return
		}
		http.Redirect(w, r, h.pageURL(p), http.StatusSeeOther)
		return
	}
	actor := siteadmin.Actor{Kind: siteadmin.ActorKind(approval.ActorERPUser), Name: user}
	if err := h.sessions.EndEverywhere(w, r, p.site.SessionScope(), user, h.now()); err != nil {
		h.deps.Admin.Record(r.Context(), actor, p.site.ID, p.site.Slug, approval.EventSignOutEverywhere, nil, err)
		h.internalError(w, "sign out everywhere", err)
		return
	}
	h.deps.Admin.Record(r.Context(), actor, p.site.ID, p.site.Slug, approval.EventSignOutEverywhere, map[string]any{"action_id": p.action.ID.String()}, nil)
	key, _ := h.deps.Kit.Binding(r, csrfCookie)
	check := pagekit.NoticeCheck(key, noticePurpose(p.action.ID, doneSignedOutEverywhere))
	http.Redirect(w, r, h.pageURL(p)+"?done="+doneSignedOutEverywhere+"&check="+url.QueryEscape(check), http.StatusSeeOther)
}

// noticePurpose is what a notice's check value (pagekit.NoticeCheck)
// covers: the action's page and the notice. The page says what its
// address names only with its browser's check value, never from a link
// alone.
func noticePurpose(id uuid.UUID, done string) string {
	return "approve\x00" + id.String() + "\x00" + done
}

// doneSignedOutEverywhere is the page's query after signing out
// everywhere, which it says in a sentence.
const doneSignedOutEverywhere = "signed-out-everywhere"

// withdrawRefusal says why an approval could not be withdrawn.
func withdrawRefusal(err error) string {
	switch {
	case errors.Is(err, approval.ErrUsed):
		return "Your approval could not be withdrawn: erpgate had already begun carrying out this change."
	case errors.Is(err, approval.ErrWithdrawn):
		return "The approval was already withdrawn."
	case errors.Is(err, approval.ErrNotApproved):
		return "There is no approval to withdraw: the change is not approved."
	case errors.Is(err, approval.ErrExpired):
		return "There is no approval to withdraw any more: the change ran out before it was carried out."
	}
	return "There is no approval to withdraw."
}

// recordDecision records the usage event of a decision (method
// "approval"), so that the viewer shows the write's lifecycle.
func (h *Handler) recordDecision(p pending, a approval.Action, user string, approve bool) {
	h.recordApprovalEvent(p, a, user, decisionWord(approve))
}

// recordApprovalEvent records a usage event of method "approval" whose
// stage is what the person did (approved, rejected, withdrawn).
func (h *Handler) recordApprovalEvent(p pending, a approval.Action, user, stage string) {
	if h.deps.Usage == nil {
		return
	}
	h.deps.Usage.Record(usage.Event{
		Timestamp: h.now().UTC(), SiteID: p.site.ID, SiteSlug: p.site.Slug, AuthType: a.Key.AuthType,
		ERPUser: user, ClientID: a.ClientID, Method: "approval", Tool: a.Key.Tool, Outcome: usage.Success,
		Approval: stage,
	})
}

func decisionWord(approve bool) string {
	if approve {
		return string(approval.Approved)
	}
	return string(approval.Rejected)
}

// posted begins a post to the page of action raw: limited per source
// (limit names the bound), its body bounded, the action loaded and the
// form checked (its token, its origin). It reports false when it has
// answered the request.
func (h *Handler) posted(w http.ResponseWriter, r *http.Request, raw, limit string) (pending, bool) {
	if h.limited(w, r, h.posts, limit) {
		return pending{}, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	p, ok := h.load(w, r, raw)
	if !ok || !h.checkForm(w, r, p) {
		return pending{}, false
	}
	return p, true
}

// postedBy is posted with the signed-in person of the action's site: user
// and signedIn are the approval session's (h.session). answered is true
// when it has answered the request.
func (h *Handler) postedBy(w http.ResponseWriter, r *http.Request, raw, limit string) (p pending, user string, signedIn, answered bool) {
	p, ok := h.posted(w, r, raw, limit)
	if !ok {
		return p, "", false, true
	}
	user, signedIn, err := h.session(r, p.site)
	if err != nil {
		h.internalError(w, "check the approval session", err)
		return p, "", false, true
	}
	return p, user, signedIn, false
}
