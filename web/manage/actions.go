package manage

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// statusOf is the HTTP status of a page that shows a refused action.
func statusOf(err error) int {
	var e *siteadmin.Error
	if !errors.As(err, &e) {
		return http.StatusInternalServerError
	}
	switch e.Kind {
	case siteadmin.Invalid, siteadmin.Rejected:
		return http.StatusBadRequest
	case siteadmin.NotFound:
		return http.StatusNotFound
	case siteadmin.Conflict:
		return http.StatusConflict
	case siteadmin.Unreachable:
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

// logReference logs an error nobody can act on and returns its reference.
func (h *Handler) logReference(err error) string {
	ref := pagekit.NewReference()
	h.log.Error("owner action failed", zap.String("reference", ref), zap.Error(err))
	return ref
}

// refused shows the owner's page again with err in section.
func (h *Handler) refused(w http.ResponseWriter, r *http.Request, o owner, section string, err error) {
	h.showPage(w, r, o, statusOf(err), "", section, err)
}

func (h *Handler) done(w http.ResponseWriter, r *http.Request, o owner, code string) {
	http.Redirect(w, r, h.noticeURL(r, o.site, code), http.StatusSeeOther)
}

// signOut ends the session for every replica, a copy of its cookie
// included.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, o owner) {
	if err := h.endSession(w, r, o.site); err != nil {
		h.internalError(w, "sign out", err)
		return
	}
	h.done(w, r, o, "signed-out")
}

// signOutEverywhere ends every owner session of o's ERP user on the site,
// in this browser and any other (a shared computer, a copied cookie), for
// every replica at once, and drops the ERP tokens kept for them. Another
// person's sessions, and this person's on other sites, go on.
func (h *Handler) signOutEverywhere(w http.ResponseWriter, r *http.Request, o owner) {
	ctx := r.Context()
	if err := h.sessions.EndEverywhere(w, r, o.site.SessionScope(), o.user, h.now()); err != nil {
		h.deps.Admin.Record(ctx, o.actor(), o.site.ID, o.site.Slug, siteadmin.ActionOwnerSignOutEverywhere, nil, err)
		h.internalError(w, "sign out everywhere", err)
		return
	}
	dropped, err := h.deps.Tokens.DropPerson(ctx, o.site.ID, o.user)
	if err != nil {
		// The sessions are ended: no change can be made with the tokens
		// left, and the sweep drops them once they expire.
		h.log.Warn("owner's ERP tokens not dropped after signing out everywhere", zap.String("site_slug", o.site.Slug), zap.Error(err))
	}
	h.deps.Admin.Record(ctx, o.actor(), o.site.ID, o.site.Slug, siteadmin.ActionOwnerSignOutEverywhere,
		map[string]any{"erp_tokens_dropped": dropped}, nil)
	h.done(w, r, o, "signed-out-everywhere")
}

// changeSettings saves the display name and the kind's settings. A change
// of tenant is proven first: the owner signs in as an administrator of the
// tenant the site moves to.
func (h *Handler) changeSettings(w http.ResponseWriter, r *http.Request, o owner) {
	ctx := r.Context()
	typed := func(key string) (string, bool) {
		if v, ok := r.PostForm["setting_"+key]; ok && len(v) == 1 {
			return strings.TrimSpace(v[0]), true
		}
		return "", false
	}
	// Bytes that are not text are refused as the new-site forms refuse
	// them: JSON would store them as U+FFFD without a word.
	if _, err := siteadmin.FormSettings(o.site.Kind, func(key string) string { v, _ := typed(key); return v }); err != nil {
		h.deps.Admin.Record(ctx, o.actor(), o.site.ID, o.site.Slug, siteadmin.ActionUpdateSite, nil, err)
		h.refused(w, r, o, "settings", err)
		return
	}
	current := map[string]any{}
	_ = json.Unmarshal(o.site.Settings, &current)
	for _, f := range siteadmin.SettingFields(o.site.Kind) {
		if v, ok := typed(f.Key); ok {
			current[f.Key] = v
		}
	}
	settings, err := json.Marshal(current)
	if err != nil {
		h.refused(w, r, o, "settings", err)
		return
	}
	name := r.PostFormValue("display_name")
	needsProof, err := h.deps.Admin.NeedsProof(o.site, settings)
	// What is saved without a sign-in at the ERP first asks the ERP again.
	if (err != nil || !needsProof || name != o.site.DisplayName) && !h.stillAdmin(w, r, o, siteadmin.ActionUpdateSite, "settings") {
		return
	}
	if err != nil || !needsProof {
		// A refusal is UpdateSite's to record, with the rest of the change.
		if _, err := h.deps.Admin.UpdateSite(ctx, o.actor(), o.site, siteadmin.SiteChange{DisplayName: &name, Settings: settings}); err != nil {
			h.refused(w, r, o, "settings", err)
			return
		}
		h.done(w, r, o, "settings")
		return
	}
	if name != o.site.DisplayName {
		updated, err := h.deps.Admin.UpdateSite(ctx, o.actor(), o.site, siteadmin.SiteChange{DisplayName: &name})
		if err != nil {
			h.refused(w, r, o, "settings", err)
			return
		}
		o.site = updated
	}
	id, err := h.deps.Admin.ProposeOwnerChange(ctx, o.actor(), o.site, siteadmin.OwnerChangeRequest{Settings: settings})
	if err != nil {
		h.refused(w, r, o, "settings", err)
		return
	}
	h.beginChange(w, r, o, id, "settings")
}

// rotateSecret keeps the new client secret until a sign-in with it
// succeeds at the ERP; only then is it saved.
func (h *Handler) rotateSecret(w http.ResponseWriter, r *http.Request, o owner) {
	id, err := h.deps.Admin.ProposeOwnerChange(r.Context(), o.actor(), o.site, siteadmin.OwnerChangeRequest{ClientSecret: r.PostFormValue("client_secret")})
	if err != nil {
		h.refused(w, r, o, "oauth", err)
		return
	}
	h.beginChange(w, r, o, id, "oauth")
}

// beginChange sends the owner to sign in at the ERP with change id, once
// the ERP's address answers as an ERP of the site's kind; otherwise the
// change is dropped and the page's section says why.
func (h *Handler) beginChange(w http.ResponseWriter, r *http.Request, o owner, id uuid.UUID, section string) {
	if err := h.deps.Admin.ProbeOwnerChange(r.Context(), o.actor(), o.site, id); err != nil {
		h.log.Info("owner change not sent to the ERP", zap.String("site_slug", o.site.Slug), zap.Error(err))
		h.refused(w, r, o, section, err)
		return
	}
	if err := h.deps.Proofs.Begin(w, r, PurposeChange, o.site.ID.String()+"/"+id.String()); err != nil {
		h.deps.Admin.RefuseOwnerChange(r.Context(), o.actor(), o.site, id, siteadmin.Refused("the sign-in at the ERP could not start"))
		h.beginFailed(w, o.site, err)
	}
}

// putAPICredential verifies the fixed API credential at the ERP and saves
// it only if the ERP accepts it.
func (h *Handler) putAPICredential(w http.ResponseWriter, r *http.Request, o owner) {
	creds := map[string]string{}
	if conn, ok := h.deps.Registry.Get(o.site.Kind); ok {
		for _, f := range conn.APICredentialFields() {
			creds[f.Name] = r.PostFormValue("cred_" + f.Name)
		}
	}
	if _, err := h.deps.Admin.PutAPIConnection(r.Context(), o.actor(), o.site, creds); err != nil {
		h.refused(w, r, o, "api", err)
		return
	}
	h.done(w, r, o, "api-credential")
}

// tokenData is what token.html shows, once.
type tokenData struct {
	Slug, Name, Prefix, Token, ServiceURL string
	// Expiry says when the token expires, as a sentence.
	Expiry string
}

// URL is the owner's page.
func (d tokenData) URL(path string) string { return pageData{Slug: d.Slug}.URL(path) }

func (h *Handler) issueToken(w http.ResponseWriter, r *http.Request, o owner) {
	days, err := siteadmin.FormTokenLifetime(r.PostFormValue("expires_in_days"))
	if err != nil {
		h.refused(w, r, o, "tokens", err)
		return
	}
	st, value, err := h.deps.Admin.IssueServiceToken(r.Context(), o.actor(), o.site, strings.TrimSpace(r.PostFormValue("name")), days)
	if err != nil {
		h.refused(w, r, o, "tokens", err)
		return
	}
	// With the kit's script, for the button that copies the token.
	if err := h.deps.Kit.Render(w, http.StatusCreated, h.token, tokenData{
		Slug: o.site.Slug, Name: st.Name, Prefix: st.Prefix, Token: value.Reveal(), ServiceURL: h.deps.Kit.URL("/service/mcp"),
		Expiry: siteadmin.TokenExpiry(st),
	}, pagekit.Options{FormAction: pagekit.FormActionWith(o.site.BaseURL), Script: true}); err != nil {
		h.log.Error("owner page not rendered", zap.Error(err))
	}
}

func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request, o owner) {
	ref := r.PostFormValue("token_id")
	id, err := uuid.Parse(ref)
	if err != nil {
		id = uuid.Nil
	}
	if err := h.deps.Admin.RevokeServiceToken(r.Context(), o.actor(), o.site, id, ref); err != nil {
		h.refused(w, r, o, "tokens", err)
		return
	}
	h.done(w, r, o, "token-revoked")
}

func (h *Handler) revokePerson(w http.ResponseWriter, r *http.Request, o owner) {
	if err := h.deps.Admin.RevokePerson(r.Context(), o.actor(), o.site, r.PostFormValue("erp_user")); err != nil {
		h.refused(w, r, o, "people", err)
		return
	}
	h.done(w, r, o, "person-revoked")
}

func (h *Handler) setStatus(w http.ResponseWriter, r *http.Request, o owner) {
	status := r.PostFormValue("status")
	if _, err := h.deps.Admin.UpdateSite(r.Context(), o.actor(), o.site, siteadmin.SiteChange{Status: &status}); err != nil {
		h.refused(w, r, o, "status", err)
		return
	}
	code := "enabled"
	if status == string(sites.StatusDisabled) {
		code = "disabled"
	}
	h.done(w, r, o, code)
}

// deletedData is what deleted.html shows.
type deletedData struct{ Slug, DisplayName string }

// deleteSite deletes the site once the owner typed its short name.
func (h *Handler) deleteSite(w http.ResponseWriter, r *http.Request, o owner) {
	if strings.TrimSpace(r.PostFormValue("confirm")) != o.site.Slug {
		h.refused(w, r, o, "delete", &siteadmin.Error{Kind: siteadmin.Invalid,
			Message: "to delete the site, type its short name, " + o.site.Slug + ", in the box; nothing was deleted"})
		return
	}
	if err := h.deps.Admin.DeleteSite(r.Context(), o.actor(), o.site); err != nil {
		h.refused(w, r, o, "delete", err)
		return
	}
	if err := h.endSession(w, r, o.site); err != nil {
		h.log.Warn("the session of a deleted site's owner not ended", zap.Error(err))
	}
	h.render(w, http.StatusOK, h.deleted, deletedData{Slug: o.site.Slug, DisplayName: o.site.DisplayName}, o.site)
}
