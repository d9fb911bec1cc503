package manage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

func csrfToken(key string, site sites.Site) string { return pagekit.CSRFToken(key, csrfPurpose(site)) }

// beginSignIn answers the sign-in form: the browser goes to the ERP to
// sign in with the site's OAuth client.
func (h *Handler) beginSignIn(c echo.Context) {
	w, r := c.Response(), c.Request()
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	source := sourcelimit.Source(h.deps.ClientIP(r))
	if ok, wait, first := h.limit.Allow(source); !ok {
		secs := sourcelimit.RetryAfter(w.Header(), wait)
		if first {
			h.log.Info("source rate limit", zap.String("endpoint", "owner sign-in"), zap.String("source", source))
		}
		h.renderError(w, http.StatusTooManyRequests, pagekit.ErrorPage{
			Title:   "Too many sign-ins",
			Message: "This address has started too many sign-ins on erpgate's owner pages in a short time.",
			Next:    fmt.Sprintf("Wait %d seconds, then try again.", secs),
		})
		return
	}
	site, ok := h.loadSite(w, r, c.Param("slug"))
	if !ok || !h.checkForm(w, r, site) {
		return
	}
	// A site without an OAuth client is told so without asking the ERP.
	if _, _, err := h.deps.Admin.OAuthClient(r.Context(), site); err != nil {
		h.beginFailed(w, site, err)
		return
	}
	// As the registration does: a browser sent to an ERP that answers
	// nothing shows its own error page, with no way back here.
	if err := h.deps.Admin.SiteReachable(r.Context(), site); err != nil {
		var e *siteadmin.Error
		if !errors.As(err, &e) || e.Kind == siteadmin.Internal {
			h.internalError(w, "ask the ERP before an owner's sign-in", err)
			return
		}
		h.log.Info("owner sign-in: the ERP does not answer", zap.String("site", site.Slug), zap.Error(err))
		data := pageData{Slug: site.Slug, Kind: siteadmin.KindName(site.Kind), CSRF: csrfToken(h.csrfKey(w, r), site),
			Problem: e.PeopleSentence(nil) + " You sign in to this page through your ERP: try again once it answers."}
		h.render(w, http.StatusBadGateway, h.signIn, data, site)
		return
	}
	if err := h.deps.Proofs.Begin(w, r, PurposeSignIn, site.ID.String()); err != nil {
		h.beginFailed(w, site, err)
	}
}

// beginFailed explains a sign-in that could not start.
func (h *Handler) beginFailed(w http.ResponseWriter, site sites.Site, err error) {
	var e *siteadmin.Error
	if errors.As(err, &e) && e.Kind == siteadmin.Conflict {
		h.renderError(w, http.StatusConflict, pagekit.ErrorPage{
			Title:   "This site has no OAuth client",
			Message: "Signing in to the owner page uses the site's OAuth client at the ERP, and this site has none.",
			Next:    "Ask your erpgate operator to set the site's OAuth client.",
		})
		return
	}
	ref := h.logReference(err)
	h.renderError(w, http.StatusBadGateway, pagekit.ErrorPage{
		Title:     "The sign-in at your ERP could not start",
		Message:   "erpgate could not send you to your ERP to sign in. Nothing was changed.",
		Next:      "Try again in a moment from the owner page (" + h.manageURL(site.Slug, "") + "). If it keeps happening, tell your erpgate operator.",
		Reference: ref,
	})
}

// signInTarget is what an owner's sign-in signs in with: the site's own
// OAuth client.
func (h *Handler) signInTarget(ctx context.Context, ref string) (erpadmin.Target, error) {
	site, err := h.siteOfRef(ctx, ref)
	if err != nil {
		return erpadmin.Target{}, err
	}
	csite, client, err := h.deps.Admin.OAuthClient(ctx, site)
	if err != nil {
		return erpadmin.Target{}, err
	}
	return erpadmin.Target{SiteID: site.ID, Kind: site.Kind, Site: csite, Client: client, CallbackPath: site.CallbackPath()}, nil
}

// changeRef splits a change proof's ref.
func changeRef(ref string) (siteID, changeID uuid.UUID, ok bool) {
	a, b, found := strings.Cut(ref, "/")
	s, err1 := uuid.Parse(a)
	c, err2 := uuid.Parse(b)
	return s, c, found && err1 == nil && err2 == nil
}

// changeTarget signs in with the change applied: the new client secret,
// the new settings.
func (h *Handler) changeTarget(ctx context.Context, ref string) (erpadmin.Target, error) {
	siteID, changeID, ok := changeRef(ref)
	if !ok {
		return erpadmin.Target{}, sites.ErrNotFound
	}
	site, err := h.deps.Store.GetSite(ctx, siteID)
	if err != nil {
		return erpadmin.Target{}, err
	}
	csite, client, err := h.deps.Admin.OwnerChangeTarget(ctx, site, changeID)
	if err != nil {
		return erpadmin.Target{}, err
	}
	return erpadmin.Target{SiteID: site.ID, Kind: site.Kind, Site: csite, Client: client, CallbackPath: site.CallbackPath()}, nil
}

// siteGone answers a proof whose site was deleted meanwhile.
func (h *Handler) siteGone(w http.ResponseWriter, err error) {
	if !errors.Is(err, sites.ErrNotFound) {
		h.internalError(w, "load site after sign-in", err)
		return
	}
	h.renderError(w, http.StatusNotFound, pagekit.ErrorPage{
		Title:   "No site to manage here",
		Message: "The site you signed in for no longer exists on erpgate.",
		Next:    "If you still want to use erpgate with your ERP, register it again.",
	})
}

// notAdmin is the page for a person the ERP does not call an
// administrator.
func (h *Handler) notAdmin(w http.ResponseWriter, site sites.Site, p erpadmin.Proof, doing string) {
	msg := fmt.Sprintf("You signed in to your ERP as %s, who is not one of its administrators", p.User.ID)
	if p.Check.Evidence != "" {
		msg += " (the ERP says: " + p.Check.Evidence + ")"
	}
	h.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
		Title:   "Only the ERP's administrators can manage this site",
		Message: msg + ". " + doing,
		Next:    "Sign out of your ERP, then open the owner page (" + h.manageURL(site.Slug, "") + ") again and sign in with an administrator's account, or ask one of the ERP's administrators.",
	})
}

func notAdminRefusal(p erpadmin.Proof) error {
	if p.Check.Evidence != "" {
		return siteadmin.Refused("%s is not an administrator of the ERP: %s", p.User.ID, p.Check.Evidence)
	}
	return siteadmin.Refused("%s is not an administrator of the ERP", p.User.ID)
}

func proofActor(p erpadmin.Proof) siteadmin.Actor {
	if p.User.ID == "" {
		return siteadmin.ERPAdmin("unknown ERP user")
	}
	return siteadmin.ERPAdmin(p.User.ID)
}

// signInDone lets an ERP administrator in, and nobody else.
func (h *Handler) signInDone(w http.ResponseWriter, r *http.Request, ref string, p erpadmin.Proof, err error) {
	if ref == "" {
		h.proofFailed(w, "", err, "You are not signed in to the owner page.")
		return
	}
	site, lerr := h.siteOfRef(r.Context(), ref)
	if lerr != nil {
		h.siteGone(w, lerr)
		return
	}
	switch {
	case err != nil:
		h.log.Info("owner sign-in did not complete", zap.String("site_slug", site.Slug), zap.Error(err))
		refusal := siteadmin.Refused("the sign-in at the ERP did not complete: %s", proofReason(err))
		if p.User.ID == "" {
			// No one was identified: anyone may start a sign-in and end it
			// so. Counted in the site's row of the minute.
			h.deps.Admin.RecordAnonymousOwnerSignIn(r.Context(), site, proofReason(err), refusal)
		} else {
			h.deps.Admin.RecordOwnerSignIn(r.Context(), proofActor(p), site, "", refusal)
		}
		h.proofFailed(w, site.Slug, err, "You are not signed in to the owner page.")
	case !p.Check.Admin:
		h.deps.Admin.RecordOwnerSignIn(r.Context(), proofActor(p), site, p.Check.Evidence, notAdminRefusal(p))
		h.notAdmin(w, site, p, "Only they can manage the site on erpgate.")
	default:
		if err := h.startSession(w, r, site, p.User.ID, p.Tokens()); err != nil {
			h.internalError(w, "start the owner session", err)
			return
		}
		h.deps.Admin.RecordOwnerSignIn(r.Context(), proofActor(p), site, p.Check.Evidence, nil)
		http.Redirect(w, r, h.noticeURL(r, site, "signed-in"), http.StatusSeeOther)
	}
}

// changeDone saves a pending change once the sign-in with it succeeded as
// an administrator; otherwise the change is dropped.
func (h *Handler) changeDone(w http.ResponseWriter, r *http.Request, ref string, p erpadmin.Proof, err error) {
	ctx := r.Context()
	siteID, changeID, ok := changeRef(ref)
	if !ok {
		h.proofFailed(w, "", err, "Nothing was changed.")
		return
	}
	site, lerr := h.deps.Store.GetSite(ctx, siteID)
	if lerr != nil {
		h.siteGone(w, lerr)
		return
	}
	actor := proofActor(p)
	if p.User.ID == "" {
		if user, ok, _ := h.session(r, site); ok {
			actor = siteadmin.ERPAdmin(user)
		}
	}
	switch {
	case err != nil:
		h.log.Info("owner change not proven", zap.String("site_slug", site.Slug), zap.Error(err))
		h.deps.Admin.RefuseOwnerChange(ctx, actor, site, changeID, siteadmin.Refused("the sign-in at the ERP with the change did not succeed (%s), so it was not saved", proofReason(err)))
		if !errors.Is(err, erpadmin.ErrClientRefused) {
			h.proofFailed(w, site.Slug, err, "Nothing was changed.")
			return
		}
		h.renderError(w, http.StatusBadRequest, pagekit.ErrorPage{
			Title:   "Your ERP did not accept the change",
			Message: "erpgate signed you in at your ERP with the change, to check it before saving it, and the ERP refused the OAuth client. Nothing was changed.",
			Causes: []string{
				"The new client secret was not copied whole, or belongs to another OAuth client.",
				"The ERP has not saved the new secret yet.",
				"The new tenant is not the tenant of the site's OAuth client.",
			},
			Next: "Open the owner page (" + h.manageURL(site.Slug, "") + "), check the value and try again.",
		})
	case !p.Check.Admin:
		h.deps.Admin.RefuseOwnerChange(ctx, actor, site, changeID, notAdminRefusal(p))
		msg := fmt.Sprintf("erpgate signed you in at your ERP as %s with the change, to check it before saving it, and the ERP did not confirm that you administer it", p.User.ID)
		if p.Check.Evidence != "" {
			msg += " (the ERP says: " + p.Check.Evidence + ")"
		}
		h.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
			Title:   "The change was not saved",
			Message: msg + ". Nothing was changed.",
			Causes: []string{
				"The new tenant is not the login name of a tenant you administer.",
				"You signed in with an account that is not an administrator.",
			},
			Next: "Open the owner page (" + h.manageURL(site.Slug, "") + "), check the value and try again.",
		})
	default:
		change, gerr := h.deps.Store.GetOwnerChange(ctx, site.ID, changeID)
		updated, aerr := h.deps.Admin.ApplyOwnerChange(ctx, actor, site, changeID)
		if aerr != nil || gerr != nil {
			if aerr == nil {
				aerr = gerr
			}
			h.changeFailed(w, site, aerr)
			return
		}
		// The session is for the site as it is now: after a move to
		// another tenant, the one the owner just proved, with the ERP
		// token of that proof.
		if err := h.startSession(w, r, updated, p.User.ID, p.Tokens()); err != nil {
			h.internalError(w, "start the owner session", err)
			return
		}
		code := "settings"
		if change.ClientSecret.IsSet() {
			code = "secret"
		}
		http.Redirect(w, r, h.noticeURL(r, site, code), http.StatusSeeOther)
	}
}

// changeFailed explains a proven change that could not be saved.
func (h *Handler) changeFailed(w http.ResponseWriter, site sites.Site, err error) {
	var e *siteadmin.Error
	if !errors.As(err, &e) || e.Kind == siteadmin.Internal {
		h.internalError(w, "apply owner change", err)
		return
	}
	h.renderError(w, statusOf(err), pagekit.ErrorPage{
		Title:   "The change was not saved",
		Message: e.PeopleSentence(nil),
		Next:    "Open the owner page (" + h.manageURL(site.Slug, "") + ") and try again.",
	})
}

// proofReason names a failed proof in a few words, for audit events.
func proofReason(err error) string {
	switch {
	case errors.Is(err, erpadmin.ErrClientRefused):
		return "the ERP refused the OAuth client"
	case errors.Is(err, erpadmin.ErrCancelled):
		return "cancelled at the ERP"
	case errors.Is(err, erpadmin.ErrUnreachable):
		return "the ERP could not be reached"
	case errors.Is(err, erpadmin.ErrNoIdentity):
		return "the ERP did not say who signed in"
	case errors.Is(err, erpadmin.ErrAdminCheck):
		return "the administrator check could not be completed"
	case errors.Is(err, erpadmin.ErrState):
		return "the sign-in expired or was opened in another browser"
	}
	return "erpgate failed"
}

// proofFailed is the page of a sign-in at the ERP that did not complete;
// slug is the site's, when known. outcome says what it means here.
func (h *Handler) proofFailed(w http.ResponseWriter, slug string, err error, outcome string) {
	next := "Go back to the owner page and start again."
	if slug != "" {
		next = "Open the owner page (" + h.manageURL(slug, "") + ") and start again."
	}
	page := pagekit.ErrorPage{Title: "The sign-in at your ERP did not complete", Next: next}
	status := http.StatusBadRequest
	switch {
	case errors.Is(err, erpadmin.ErrClientRefused):
		page.Message = "Your ERP refused the site's OAuth client. " + outcome
		page.Causes = []string{"The OAuth client was deleted or disabled in the ERP.", "Its secret was changed in the ERP and not on erpgate."}
		page.Next = "Ask your erpgate operator to set the site's OAuth client again."
	case errors.Is(err, erpadmin.ErrCancelled):
		page.Message = "The sign-in was cancelled at your ERP. " + outcome
	case errors.Is(err, erpadmin.ErrUnreachable):
		page.Message = "erpgate could not reach your ERP to finish the sign-in. " + outcome
		status = http.StatusBadGateway
		page.Next = "Try again in a moment. " + next
	case errors.Is(err, erpadmin.ErrState):
		page.Message = "This sign-in expired, was already used, or was opened in another browser than the one that started it. " + outcome
	case errors.Is(err, erpadmin.ErrNoIdentity), errors.Is(err, erpadmin.ErrAdminCheck):
		page.Message = "Your ERP did not say who you are or whether you administer it. " + outcome
		status = http.StatusBadGateway
	default:
		page.Message = "erpgate could not finish the sign-in. " + outcome
		page.Reference = h.logReference(err)
		status = http.StatusInternalServerError
	}
	h.renderError(w, status, page)
}
