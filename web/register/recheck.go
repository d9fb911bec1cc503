package register

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
)

// The registration's last step changes the registered site as its owner
// does on the owner's page, for as long as the registration stays open.
// As there, it first asks the ERP again, with the ERP token the
// registrant proved themselves with (kept sealed in owner_session_tokens
// under the registration's key until the registration expires), whether
// they still administer it.

// Sentences of the last step refused because the ERP was asked again.
const (
	regNotAdminAnyMore = "Your ERP no longer lists you as an administrator of it, so nothing was saved."
	regSignInEnded     = "Your ERP no longer accepts your sign-in (it was revoked or has expired), so nothing was saved. Set the API credential on the site's owner page, after signing in there."
	regNoSignInKept    = "erpgate no longer holds your sign-in at your ERP, so nothing was saved. Set the API credential on the site's owner page, after signing in there."
	regERPNotReached   = "Your ERP could not be reached to check that you still administer it, so nothing was saved. Try again in a moment."
	regNoOAuthSignIn   = "This site has no OAuth sign-in any more, so erpgate cannot confirm that you still administer it, and nothing was saved. Ask erpgate's operator to set up the site's sign-in again."
)

// tokenKey is what the registrant's ERP token is kept under: no owner
// session cookie (a signed value) is ever spelt so.
func tokenKey(id uuid.UUID) string { return "registration\x00" + id.String() }

// keepToken keeps token, the registrant user's ERP tokens, for the
// registration id of site until expires. Not kept, the last step is
// refused until the registrant uses the owner's page.
func (h *Handler) keepToken(ctx context.Context, id uuid.UUID, site sites.Site, user string, token connector.StoredToken, expires time.Time) {
	if !token.Access.IsSet() {
		return
	}
	if err := h.deps.Tokens.KeepTokens(ctx, site.ID, tokenKey(id), user, token, expires); err != nil {
		h.log.Error("the registrant's ERP token not kept; the API step will be refused", zap.String("site_slug", site.Slug), zap.Error(err))
	}
}

// stillAdmin asks the ERP, with the registrant's kept token, whether they
// still administer site, before the last step changes it. When not, the
// refusal is recorded as put_api_connection and the result page says why;
// it returns whether the step may go on.
func (h *Handler) stillAdmin(w http.ResponseWriter, r *http.Request, browser string, p pendingReg, site sites.Site) bool {
	ctx := r.Context()
	refuse := func(status int, kind siteadmin.Kind, details map[string]any, message, sentence string) bool {
		h.deps.Admin.Record(ctx, siteadmin.ERPAdmin(p.ERPUser), site.ID, site.Slug, siteadmin.ActionPutAPIConnection, details,
			siteadmin.Refusal(kind, message))
		h.renderResult(w, r, status, browser, p, resultExtra{Error: sentence})
		return false
	}
	v := h.deps.Proofs.AskAgain(ctx, h.deps.Tokens, site, tokenKey(p.ID), p.ERPUser, func(ctx context.Context) (connector.OAuthClient, error) {
		_, client, err := h.deps.Admin.OAuthClient(ctx, site)
		if e := (*siteadmin.Error)(nil); errors.As(err, &e) && e.Kind == siteadmin.Conflict {
			// The operator removed the site's OAuth connection.
			return client, fmt.Errorf("%w: %w", erpadmin.ErrNoOAuthClient, err)
		}
		return client, err
	})
	switch v.Kind {
	case erpadmin.VerdictAdmin:
		return true
	case erpadmin.VerdictNoToken:
		return refuse(http.StatusForbidden, siteadmin.Rejected, nil, "erpgate holds no ERP sign-in of "+p.ERPUser+" for the registration; nothing was saved", regNoSignInKept)
	case erpadmin.VerdictTokenRefused:
		// A token the ERP refused is not sent to it again at a later try.
		if err := h.deps.Tokens.Drop(ctx, site.ID, tokenKey(p.ID)); err != nil {
			h.log.Warn("the registrant's refused ERP token not dropped", zap.String("site_slug", site.Slug), zap.Error(err))
		}
		return refuse(http.StatusForbidden, siteadmin.Rejected, nil, "the ERP no longer accepts "+p.ERPUser+"'s sign-in (revoked or expired); nothing was saved", regSignInEnded)
	case erpadmin.VerdictNoOAuthClient:
		return refuse(http.StatusForbidden, siteadmin.Rejected, nil, "site "+site.Slug+" has no OAuth client, so "+p.ERPUser+"'s kept ERP sign-in could not be renewed to check that they still administer it; nothing was saved", regNoOAuthSignIn)
	case erpadmin.VerdictUnreachable:
		return refuse(http.StatusBadGateway, siteadmin.Unreachable, nil, "the ERP could not be reached to check that "+p.ERPUser+" still administers it; nothing was saved", regERPNotReached)
	case erpadmin.VerdictNotAdmin:
		// Kept: the registrant may be given the role back and try again.
		var details map[string]any
		if v.Evidence != "" {
			details = map[string]any{"evidence": v.Evidence}
		}
		return refuse(http.StatusForbidden, siteadmin.Rejected, details, p.ERPUser+" is no longer an administrator of the ERP ("+v.Said()+"); nothing was saved", regNotAdminAnyMore)
	}
	h.internal(w, v.Step.Words("read the registrant's ERP token"), v.Err)
	return false
}
