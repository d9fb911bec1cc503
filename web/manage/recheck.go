package manage

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

// An owner session is a bearer of the ERP administrator's say over the
// site, and the ERP may take that say away while the session lasts
// (the owner's administrator role removed, their sign-in revoked). So
// every change an owner makes first asks the ERP again, as them, with the
// access token they signed in with (kept sealed in Postgres for the
// session, Deps.Tokens): stillAdmin. Views of the page do not ask.
//
// Changes that are saved only after a sign-in at the ERP proves the owner
// an administrator again (a new client secret, a move to another tenant)
// are asked there instead.

// Sentences of an owner change refused because the ERP was asked again.
const (
	notAdminAnyMore = "Your ERP no longer lists you as an administrator of this site, so erpgate signed you out. Nothing was changed. Sign in again if that has changed."
	signInEnded     = "Your ERP no longer accepts your sign-in (it was revoked or has expired), so erpgate signed you out. Nothing was changed. Sign in again to go on."
	noSignInKept    = "This page no longer holds your sign-in at your ERP, so erpgate signed you out. Nothing was changed. Sign in again to go on."
	noOAuthSignIn   = "This site has no OAuth sign-in any more, so erpgate cannot confirm that you still administer it and signed you out. Nothing was changed. Ask erpgate's operator to set up the site's sign-in again."
	erpNotReached   = "Your ERP could not be reached to check that you still administer it, so nothing was changed. Try again in a moment; you are still signed in."
)

// clientOf is the OAuth client of site that an owner's kept ERP token
// is renewed with.
func (h *Handler) clientOf(site sites.Site) erpadmin.ClientOf {
	return func(ctx context.Context) (connector.OAuthClient, error) {
		_, client, err := h.deps.Admin.OAuthClient(ctx, site)
		if e := (*siteadmin.Error)(nil); errors.As(err, &e) && e.Kind == siteadmin.Conflict {
			// The operator removed the site's OAuth connection.
			return client, fmt.Errorf("%w: %w", erpadmin.ErrNoOAuthClient, err)
		}
		return client, err
	}
}

// startSession sets the owner session cookie for user on site and keeps
// token, the ERP tokens they proved themselves with, for it. When the
// token cannot be kept the session is not started (err).
//
// A session the browser held before (of any site) is replaced: it is
// ended for every replica and its kept ERP token dropped, since no
// browser holds it any more, only a copy could.
func (h *Handler) startSession(w http.ResponseWriter, r *http.Request, site sites.Site, user string, token connector.StoredToken) error {
	now := h.now()
	if old, signed := h.sessions.Signed(r, now); signed {
		if err := h.deps.Tokens.DropSession(r.Context(), old); err != nil {
			return err
		}
		if expires, ok := h.deps.Signer.Expiry(sessionPurpose, old); ok {
			if err := h.deps.Ends.End(r.Context(), old, expires); err != nil {
				return err
			}
		}
	}
	cookie, err := h.sessions.Start(w, r, site.SessionScope(), user, now)
	if err != nil {
		return err
	}
	if !token.Access.IsSet() {
		// No token, no change: each is refused until they sign in again.
		return nil
	}
	if err := h.deps.Tokens.KeepTokens(r.Context(), site.ID, cookie, user, token, now.Add(SessionLifetime)); err != nil {
		http.SetCookie(w, h.deps.Kit.Cookie(sessionCookie, "", 0))
		return err
	}
	return nil
}

// endSession ends the request's owner session for every replica (as
// signing out does) and drops the ERP token kept for it.
func (h *Handler) endSession(w http.ResponseWriter, r *http.Request, site sites.Site) error {
	raw, signed := h.sessions.Signed(r, h.now())
	err := h.sessions.End(w, r, h.now())
	if signed {
		if derr := h.deps.Tokens.Drop(r.Context(), site.ID, raw); err == nil {
			err = derr
		}
	}
	return err
}

// stillAdmin asks the ERP, with o's kept ERP token, whether o still
// administers the site, before the change action (an admin_events action)
// of the page's section is made. When the ERP says no, or no longer
// accepts the token, the change is refused and recorded, the session
// ended and the page says so; when the ERP cannot be asked, the change is
// refused and recorded and the page shows the section with a sentence,
// the session kept. It returns whether the change may go on.
func (h *Handler) stillAdmin(w http.ResponseWriter, r *http.Request, o owner, action, section string) bool {
	ctx := r.Context()
	raw, _ := h.sessions.Signed(r, h.now())
	v := h.deps.Proofs.AskAgain(ctx, h.deps.Tokens, o.site, raw, o.user, h.clientOf(o.site))
	switch v.Kind {
	case erpadmin.VerdictAdmin:
		return true
	case erpadmin.VerdictNoToken:
		h.log.Info("owner change without a kept ERP token", zap.String("site_slug", o.site.Slug), zap.NamedError("cause", v.Err))
		h.signedOutForChange(w, r, o, action, "", refusalFor(
			fmt.Sprintf("erpgate holds no ERP sign-in for %s's owner session, so it was ended; nothing was changed", o.user),
			"erpgate held no sign-in at the ERP for this owner's session, so it signed them out; nothing was changed"), noSignInKept)
	case erpadmin.VerdictTokenRefused:
		h.signedOutForChange(w, r, o, action, "", refusalFor(
			fmt.Sprintf("the ERP no longer accepts %s's sign-in (revoked or expired), so their owner session was ended; nothing was changed", o.user),
			"the ERP no longer accepted this owner's sign-in (revoked or expired), so erpgate signed them out; nothing was changed"), signInEnded)
	case erpadmin.VerdictUnreachable:
		refusal := siteadmin.Refusal(siteadmin.Unreachable,
			"the ERP could not be reached to check that "+o.user+" still administers it; nothing was changed")
		refusal.ForPeople = erpNotReached
		h.deps.Admin.Record(ctx, o.actor(), o.site.ID, o.site.Slug, action, nil, refusal)
		h.refused(w, r, o, section, refusal)
	case erpadmin.VerdictNoOAuthClient:
		// Nothing can prove them an administrator any more: signed out,
		// as when the ERP refuses their sign-in.
		h.signedOutForChange(w, r, o, action, "", refusalFor(
			fmt.Sprintf("site %s has no OAuth client, so %s's kept ERP sign-in could not be renewed to check that they still administer it; their owner session was ended; nothing was changed", o.site.Slug, o.user),
			"the site has no OAuth sign-in any more, so erpgate could not check that this owner still administers it and signed them out; nothing was changed"), noOAuthSignIn)
	case erpadmin.VerdictNotAdmin:
		h.signedOutForChange(w, r, o, action, v.Evidence, refusalFor(
			fmt.Sprintf("%s is no longer an administrator of the ERP (%s), so their owner session was ended; nothing was changed", o.user, v.Said()),
			"the ERP no longer lists this owner as an administrator ("+v.Said()+"), so erpgate signed them out; nothing was changed"), notAdminAnyMore)
	default:
		h.internalError(w, v.Step.Words("read the owner's ERP token"), v.Err)
	}
	return false
}

// refusalFor is the refusal of a change for the admin API's and the log's
// words (message) and the owner page's activity list (forPeople).
func refusalFor(message, forPeople string) *siteadmin.Error {
	e := siteadmin.Refusal(siteadmin.Rejected, message)
	e.ForPeople = forPeople
	return e
}

// signedOutForChange records the refusal of o's change action, ends the
// session and says sentence on a page of its own.
func (h *Handler) signedOutForChange(w http.ResponseWriter, r *http.Request, o owner, action, evidence string, refusal *siteadmin.Error, sentence string) {
	var details map[string]any
	if evidence != "" {
		details = map[string]any{"evidence": evidence}
	}
	h.deps.Admin.Record(r.Context(), o.actor(), o.site.ID, o.site.Slug, action, details, refusal)
	if err := h.endSession(w, r, o.site); err != nil {
		h.log.Warn("owner session not ended everywhere", zap.String("site_slug", o.site.Slug), zap.Error(err))
	}
	h.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
		Title:   "You are signed out of this site's owner page",
		Message: sentence,
		Next:    "Open the owner page (" + h.manageURL(o.site.Slug, "") + ") and sign in through your ERP.",
	})
}
