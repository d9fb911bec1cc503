package manage

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// notices are the sentences a page shows after an action redirected to it.
var notices = map[string]string{
	"signed-in":      "You are signed in as an administrator of this ERP.",
	"settings":       "The site's settings are saved.",
	"writes":         "The write settings are saved. Every write still waits for the approval of the person signed in.",
	"rows":           "The rows per query are saved; erpgate applies them within a second.",
	"secret":         "The ERP accepted the new client secret in a sign-in, and it is saved.",
	"api-credential": "The ERP accepted the fixed API credential, and it is saved.",
	"token-revoked":  "The service token is revoked; programs using it are refused from now on.",
	"person-revoked": "That person's access through erpgate is revoked. They can sign in again if the ERP still lets them.",
	"disabled":       "The site is disabled: nobody can use it through erpgate until you enable it.",
	"enabled":        "The site is enabled.",
	"signed-out":     "You are signed out of this site's owner page.",
	"signed-out-everywhere": "You are signed out of this site's owner page in this browser and in every other one you signed in with. " +
		"Nobody can use those sign-ins to change the site any more.",
}

type fieldView struct {
	Name, Label, Help, Value string
	Secret                   bool
}

type tokenView struct {
	ID, Name, Prefix           string
	Created, LastUsed, Revoked dateTime
	// Expires is when the token expires, or "never"; Expired says it has.
	Expires string
	Active  bool
	Expired bool
}

// dateTime is a time in a table whose heading says UTC, in two parts, so
// that a narrow column breaks it between the day and the minute rather
// than widening the table; Date alone says "never".
type dateTime struct{ Date, Time string }

func splitStamp(t time.Time) dateTime {
	t = t.UTC()
	return dateTime{Date: t.Format(time.DateOnly), Time: t.Format("15:04")}
}

type clientView struct{ Name, First, Last string }

type personView struct {
	ERPUser, DisplayName, First, Last string
	Clients                           []clientView
	// LongClient says a client's name (or its ID, for a client without
	// one) is a long word (pagekit.HasLongWord): its cell breaks it.
	LongClient bool
}

type eventView struct{ When, Who, What, Outcome string }

// pageData is what manage.html and signin.html show.
type pageData struct {
	Slug, DisplayName, Kind, BaseURL, MCPURL, Status string
	// RedirectURI is the redirect URI the site's OAuth client must have;
	// SharedCallback says it is the one sites once shared.
	RedirectURI    string
	SharedCallback bool
	// OwnRedirectURI is the site's own, to switch to.
	OwnRedirectURI string
	// FormName is the display name in the settings form: the site's, or
	// what the owner typed when the change was refused.
	FormName string
	Active   bool
	User     string
	CSRF     string
	Notice   string
	// Problem is a refused action's message, shown in section ProblemIn.
	Problem, ProblemIn string
	Settings           []fieldView
	OAuthClientID      string
	APIIdentity        string
	APIUpdated         string
	APIFields          []fieldView
	// Tokens are the active tokens, then the latest revoked or expired
	// ones; EndedTokensNotShown counts those that ended before, up to
	// sites.MaxEndedTokensCounted: MoreEndedTokensNotShown says more did.
	Tokens                  []tokenView
	EndedTokensNotShown     int
	MoreEndedTokensNotShown bool
	// TokenLifetimes are the expiries a new token may have.
	TokenLifetimes []siteadmin.TokenLifetimeChoice
	People         []personView
	Events         []eventView
	Expires        string
	// OperatorDisabled: the operator disabled the site; only they can
	// enable it, and the owner can neither change nor delete it.
	OperatorDisabled bool
	// Writes is the Writes section; nil leaves it out.
	Writes *writesView
	// Rows is the Rows per query section; nil leaves it out.
	Rows *rowsView
}

// URL returns the address of the owner's action path.
func (d pageData) URL(path string) string {
	return "/sites/" + url.PathEscape(d.Slug) + "/manage" + path
}

// page answers GET /sites/{slug}/manage: the owner's page for a signed-in
// owner, the sign-in page for anyone else.
func (h *Handler) page(c echo.Context) error {
	w, r := c.Response(), c.Request()
	site, charge, ok := h.lookupSite(w, r, c.Param("slug"))
	if !ok {
		return nil
	}
	key := h.csrfKey(w, r)
	data := pageData{Slug: site.Slug, Kind: siteadmin.KindName(site.Kind), CSRF: csrfToken(key, site), Notice: notice(r, key, site)}
	user, ok, err := h.session(r, site)
	if err != nil {
		h.internalError(w, "check the owner session", err)
		return nil
	}
	if !ok {
		charge()
		h.render(w, http.StatusOK, h.signIn, data, site)
		return nil
	}
	h.showPage(w, r, owner{site: site, user: user, csrf: data.CSRF}, http.StatusOK, data.Notice, "", nil)
	return nil
}

// showPage renders the owner's page; problem, when not nil, is a refused
// action's error, shown in section.
func (h *Handler) showPage(w http.ResponseWriter, r *http.Request, o owner, status int, notice, section string, problem error) {
	data, err := h.pageData(r, o)
	if err != nil {
		h.internalError(w, "read site", err)
		return
	}
	data.Notice = notice
	if problem != nil {
		data.Problem, data.ProblemIn = h.problemText(problem, o.site.Kind), section
		if section == "writes" && data.Writes != nil {
			// The form shows what was sent, not what is stored.
			for i := range data.Writes.Tools {
				data.Writes.Tools[i].Enabled = slices.Contains(r.PostForm["write_tool"], data.Writes.Tools[i].Name)
			}
			data.Writes.ServiceWrites = r.PostFormValue("service_writes") == "on"
			data.Writes.Approver = r.PostFormValue("approver")
		}
		if section == "rows" && data.Rows != nil {
			// The box shows what was sent, not what is stored.
			data.Rows.Field = r.PostFormValue("max_records")
		}
		if section == "settings" {
			// Bad input loses nothing: the form shows what was typed.
			data.FormName = r.PostFormValue("display_name")
			for i := range data.Settings {
				if v, ok := r.PostForm[data.Settings[i].Name]; ok && len(v) == 1 {
					data.Settings[i].Value = v[0]
				}
			}
		}
	}
	h.render(w, status, h.manage, data, o.site)
}

func (h *Handler) pageData(r *http.Request, o owner) (pageData, error) {
	ctx := r.Context()
	site := o.site
	d := pageData{
		Slug: site.Slug, DisplayName: site.DisplayName, Kind: siteadmin.KindName(site.Kind), BaseURL: site.BaseURL,
		MCPURL: h.deps.Kit.URL("/sites/" + site.Slug + "/mcp"), Status: string(site.Status),
		RedirectURI: h.deps.Kit.URL(site.CallbackPath()), SharedCallback: site.SharedCallback,
		OwnRedirectURI: h.deps.Kit.URL(sites.SiteCallbackPath(site.Slug)),
		Active:         site.Status == sites.StatusActive, User: o.user, CSRF: o.csrf, FormName: site.DisplayName,
		OperatorDisabled: siteadmin.OperatorDisabled(site),
	}
	d.Writes = h.writesData(ctx, o)
	d.Rows = h.rowsData(ctx, o)
	var current map[string]any
	_ = json.Unmarshal(site.Settings, &current)
	for _, f := range siteadmin.SettingFields(site.Kind) {
		v := ""
		if s, ok := current[f.Key].(string); ok {
			v = s
		}
		d.Settings = append(d.Settings, fieldView{Name: "setting_" + f.Key, Label: f.Label, Help: f.Help, Value: v})
	}
	conns, err := h.deps.Store.ListConnections(ctx, site.ID)
	if err != nil {
		return d, err
	}
	for _, c := range conns {
		switch c.Type {
		case sites.ConnectionOAuth:
			if _, client, err := h.deps.Admin.OAuthClient(ctx, site); err == nil {
				d.OAuthClientID = client.ID
			}
		case sites.ConnectionAPIToken:
			d.APIIdentity, d.APIUpdated = c.VerifiedIdentity, when(c.UpdatedAt)
		}
	}
	if conn, ok := h.deps.Registry.Get(site.Kind); ok {
		for _, f := range conn.APICredentialFields() {
			d.APIFields = append(d.APIFields, fieldView{Name: "cred_" + f.Name, Label: f.Description, Secret: f.Secret})
		}
	}
	d.TokenLifetimes = siteadmin.TokenLifetimeChoices()
	// Since a move to another tenant, the site's administrators are
	// another company's: the old tenant's tokens (revoked by the move) and
	// activity are not theirs to see.
	tenantSince, err := h.deps.Store.TenantSince(ctx, site.ID)
	if err != nil {
		return d, err
	}
	tokens, err := h.deps.Admin.ListRecentServiceTokens(ctx, site, tenantSince)
	if err != nil {
		return d, err
	}
	d.EndedTokensNotShown, d.MoreEndedTokensNotShown = tokens.EndedNotShown, tokens.MoreEndedNotShown
	for _, t := range append(tokens.Active, tokens.Ended...) {
		v := tokenView{ID: t.ID.String(), Name: t.Name, Prefix: t.Prefix, Created: splitStamp(t.CreatedAt), LastUsed: dateTime{Date: "never"}, Expires: "never",
			Active: !t.Revoked && !t.Expired, Expired: t.Expired && !t.Revoked}
		if t.ExpiresAt != nil {
			// The day is enough in the list (the column has no room for
			// more); the page that showed the new token gave the minute.
			v.Expires = t.ExpiresAt.UTC().Format(time.DateOnly)
		}
		if t.LastUsedAt != nil {
			v.LastUsed = splitStamp(*t.LastUsedAt)
		}
		if t.RevokedAt != nil {
			v.Revoked = splitStamp(*t.RevokedAt)
		}
		d.Tokens = append(d.Tokens, v)
	}
	people, err := h.deps.Admin.ListPeople(ctx, site)
	if err != nil {
		return d, err
	}
	for _, p := range people {
		v := personView{ERPUser: p.ERPUser, DisplayName: p.DisplayName, First: stamp(p.FirstUsedAt), Last: stamp(p.LastUsedAt)}
		for _, c := range p.Clients {
			name := c.ClientName
			if name == "" {
				name = c.ClientID
			}
			v.Clients = append(v.Clients, clientView{Name: name, First: stamp(c.FirstUsedAt), Last: stamp(c.LastUsedAt)})
			v.LongClient = v.LongClient || pagekit.HasLongWord(name)
		}
		d.People = append(d.People, v)
	}
	events, err := h.deps.Store.ListEvents(ctx, site.ID, tenantSince, 15)
	if err != nil {
		return d, err
	}
	for _, e := range events {
		d.Events = append(d.Events, eventView{When: stamp(e.OccurredAt), Who: who(e), What: actionWords(e.Action), Outcome: outcomeWords(e)})
	}
	return d, nil
}

// when is a time in a sentence; stamp is one in a table whose heading
// says UTC.
func when(t time.Time) string { return stamp(t) + " UTC" }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

func who(e sites.Event) string {
	switch siteadmin.ActorKind(e.ActorKind) {
	case siteadmin.ActorOperator:
		return "erpgate operator"
	case siteadmin.ActorRegistrant:
		return "registration"
	case siteadmin.ActorKind(approval.ActorMCPClient):
		// A service token's write is proposed and carried out by a
		// program with that token, not by an AI client.
		if e.Details["auth_type"] == "service_token" {
			return "service token " + e.Actor
		}
		return "AI client " + e.Actor
	}
	return e.Actor
}

var actionNames = map[string]string{
	siteadmin.ActionCreateSite:             "registered the site",
	siteadmin.ActionUpdateSite:             "changed the site",
	siteadmin.ActionDeleteSite:             "deleted the site",
	siteadmin.ActionPutAPIConnection:       "set the fixed API credential",
	siteadmin.ActionPutOAuthConnection:     "set the OAuth client",
	siteadmin.ActionRotateOAuthSecret:      "replaced the OAuth client secret",
	siteadmin.ActionDeleteConnection:       "removed a connection",
	siteadmin.ActionIssueServiceToken:      "issued a service token",
	siteadmin.ActionRevokeServiceToken:     "revoked a service token",
	siteadmin.ActionRevokePerson:           "revoked a person's access",
	siteadmin.ActionOwnerSignIn:            "signed in to this page",
	siteadmin.ActionOwnerSignOutEverywhere: "signed out of this page everywhere",
	siteadmin.ActionChangeSetting:          "changed a setting",
	approval.EventProposed:                 "proposed a write",
	approval.EventApproved:                 "approved a write",
	approval.EventRejected:                 "rejected a write",
	approval.EventWithdrawn:                "withdrew a write approval",
	approval.EventExecuted:                 "carried out a write",
	approval.EventFailed:                   "tried a write the ERP refused",
	approval.EventRefused:                  "was refused a write approval",
	approval.EventSignOutEverywhere:        "signed out of the approval pages everywhere",
}

func actionWords(action string) string {
	if s, ok := actionNames[action]; ok {
		return s
	}
	return action
}

func outcomeWords(e sites.Event) string {
	switch e.Outcome {
	case siteadmin.OutcomeSuccess:
		return "done"
	case siteadmin.OutcomeRefused:
		refused := "refused"
		if e.Repeats > 1 {
			// A minute's refusals of anonymous visitors, counted in one
			// row; its sentence is the first's.
			refused = fmt.Sprintf("refused, %d times in this minute", e.Repeats)
		}
		// siteadmin keeps a sentence for people next to the reason, which
		// is in the admin API's words; the approval store's reasons are
		// codes.
		if e.Sentence != "" {
			return refused + ": " + e.Sentence
		}
		if words, ok := approval.ReasonWords[e.Reason]; ok {
			return refused + ": " + words
		}
		// An event from before events kept a sentence.
		if s := siteadmin.OldRefusalSentence(e.Action, e.Reason); s != "" {
			return refused + ": " + s
		}
		return refused
	}
	return "failed"
}

// problemText is what a refused action's error says to the owner.
// A refused input of the settings form is named by its label there.
func (h *Handler) problemText(err error, kind string) string {
	var e *siteadmin.Error
	if errors.As(err, &e) && e.Kind != siteadmin.Internal {
		return e.PeopleSentence(func(field string) string { return settingsLabel(kind, field) })
	}
	return fmt.Sprintf("erpgate could not finish this (reference %s). Nothing was changed; try again, or tell your erpgate operator.", h.logReference(err))
}

// settingsLabel is the settings form's label of what siteadmin's errors
// name ("display_name", "settings.tenant"), "" for none.
func settingsLabel(kind, field string) string {
	if field == "display_name" {
		return "Display name"
	}
	for _, f := range siteadmin.SettingFields(kind) {
		if field == "settings."+f.Key {
			return f.Label
		}
	}
	return ""
}
