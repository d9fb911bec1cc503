package console

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// NewSitePath is the console's page that adds a site, as NexWave MCP's
// /admin did: the site, and optionally its OAuth client and its fixed API
// credential (verified at the ERP), with a first service token shown once.
const NewSitePath = "/console/sites/new"

// newSiteField is one input of the new-site form.
type newSiteField struct {
	Name, Label, Help, Value string
	Secret, Required         bool
}

// newSiteView is the new-site page: a choice of kind, or the form of one.
type newSiteView struct {
	Kinds    []kindChoice
	Kind     string // "" until chosen
	KindName string
	Problem  string
	Site     []newSiteField
	OAuth    []newSiteField
	API      []newSiteField
	Token    newSiteField
	// TokenLifetimes are the expiries the first token may have.
	TokenLifetimes []siteadmin.TokenLifetimeChoice
	Callback       string // the redirect URI with <short name> for the slug
}

type kindChoice struct{ Name, URL string }

// siteAddedView is the page after a site is added.
type siteAddedView struct {
	DisplayName, Slug, Kind    string
	MCPURL, RedirectURI        string
	OAuth                      bool
	APIIdentity                string
	Token, TokenName, TokenPre string
	// TokenExpiry says when the token expires, as a sentence.
	TokenExpiry string
	ServiceURL  string
}

func (c *Console) newSitePage(w http.ResponseWriter, r *http.Request) {
	kind := r.URL.Query().Get("kind")
	if kind != "" && !slices.Contains(c.deps.Admin.Kinds(), kind) {
		kind = ""
	}
	c.renderNewSite(w, r, http.StatusOK, c.newSiteForm(kind, nil, ""))
}

// newSiteForm is the form of kind ("" for the choice), filled with what
// was sent except secrets.
func (c *Console) newSiteForm(kind string, sent func(string) string, problem string) newSiteView {
	v := newSiteView{Problem: problem}
	if kind == "" {
		for _, k := range c.deps.Admin.Kinds() {
			v.Kinds = append(v.Kinds, kindChoice{Name: siteadmin.KindName(k), URL: c.kit.URL(NewSitePath + "?kind=" + k)})
		}
		return v
	}
	value := func(name string) string {
		if sent == nil {
			return ""
		}
		return sent(name)
	}
	v.Kind, v.KindName = kind, siteadmin.KindName(kind)
	v.Site = []newSiteField{
		{Name: "display_name", Label: "Display name", Help: "What people see when they sign in and consent.", Required: true},
		{Name: "base_url", Label: "ERP address", Help: "The address people open the ERP at, such as https://erp.example.com.", Required: true},
		{Name: "slug", Label: "Short name", Help: "Lower-case letters, digits and dashes; it is part of the site's addresses.", Required: true},
	}
	for _, f := range siteadmin.SettingFields(kind) {
		v.Site = append(v.Site, newSiteField{Name: "setting_" + f.Key, Label: f.Label, Help: f.Help})
	}
	for _, f := range siteadmin.OAuthCredentialFields {
		v.OAuth = append(v.OAuth, newSiteField{Name: "oauth_" + f.Name, Label: sentenceCase(f.Description), Secret: f.Secret})
	}
	fields, _ := c.deps.Admin.APICredentialFields(kind)
	for _, f := range fields {
		v.API = append(v.API, newSiteField{Name: "api_" + f.Name, Label: sentenceCase(f.Description), Secret: f.Secret})
	}
	v.Token = newSiteField{Name: "token_name", Label: "First service token's name", Help: "Say which program uses it, such as “nightly report”. Leave it empty to issue none.", Value: "service"}
	for _, group := range [][]newSiteField{v.Site, v.OAuth, v.API} {
		for i := range group {
			if !group[i].Secret {
				group[i].Value = value(group[i].Name)
			}
		}
	}
	v.TokenLifetimes = siteadmin.TokenLifetimeChoices()
	if sent != nil {
		v.Token.Value = value(v.Token.Name)
		chosen := value("expires_in_days")
		if slices.ContainsFunc(v.TokenLifetimes, func(c siteadmin.TokenLifetimeChoice) bool { return c.Value == chosen }) {
			for i := range v.TokenLifetimes {
				v.TokenLifetimes[i].Selected = v.TokenLifetimes[i].Value == chosen
			}
		}
	}
	v.Callback = c.kit.URL(sites.SiteCallbackPath("SHORTNAME"))
	v.Callback = strings.Replace(v.Callback, "SHORTNAME", "<short name>", 1)
	return v
}

// sentenceCase starts a connector's field description with a capital.
func sentenceCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// addSite adds a site with what the form gives: the site, its OAuth
// client, its API credential (verified at the ERP) and a service token. If
// a connection is refused, the site is deleted again, so that nothing is
// left half set up, and the form comes back with the reason.
func (c *Console) addSite(w http.ResponseWriter, r *http.Request) {
	kind := r.PostFormValue("kind")
	if !slices.Contains(c.deps.Admin.Kinds(), kind) {
		c.renderNewSite(w, r, http.StatusBadRequest, c.newSiteForm("", nil, "Choose the kind of ERP first."))
		return
	}
	sent := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	refuse := func(status int, problem string) {
		c.renderNewSite(w, r, status, c.newSiteForm(kind, sent, problem))
	}
	form := c.newSiteForm(kind, sent, "")
	labels := map[string]string{}
	for _, f := range form.Site {
		name := f.Name
		if key, ok := strings.CutPrefix(name, "setting_"); ok {
			name = "settings." + key
		}
		labels[name] = f.Label
	}
	label := func(field string) string { return labels[field] }
	rawSettings, err := siteadmin.FormSettings(kind, func(key string) string { return sent("setting_" + key) })
	if err != nil {
		c.refusal(w, r, err, refuse, "", label)
		return
	}
	oauth, oauthProblem := filled(form.OAuth, "oauth_", "the OAuth client", r)
	api, apiProblem := filled(form.API, "api_", "the fixed API credential", r)
	if oauthProblem != "" || apiProblem != "" {
		refuse(http.StatusUnprocessableEntity, "Nothing was saved. "+strings.TrimSpace(oauthProblem+" "+apiProblem))
		return
	}
	tokenDays, err := siteadmin.FormTokenLifetime(sent("expires_in_days"))
	if err != nil {
		c.refusal(w, r, err, refuse, "", label)
		return
	}
	ctx := r.Context()
	actor := Actor(r)
	site, err := c.deps.Admin.CreateSite(ctx, actor, siteadmin.NewSite{
		Slug: sent("slug"), Kind: kind, DisplayName: sent("display_name"), BaseURL: sent("base_url"), Settings: rawSettings,
	})
	if err != nil {
		c.refusal(w, r, err, refuse, "", label)
		return
	}
	undo := func(err error) {
		if derr := c.deps.Admin.DeleteSite(ctx, actor, site); derr != nil {
			c.log.Error("delete a site whose connection was refused", zap.String("site", site.Slug), zap.Error(derr))
		}
		c.refusal(w, r, err, refuse, "The site was not added", label)
	}
	added := siteAddedView{DisplayName: site.DisplayName, Slug: site.Slug, Kind: siteadmin.KindName(kind),
		MCPURL: c.kit.URL("/sites/" + site.Slug + "/mcp"), RedirectURI: c.kit.URL(site.CallbackPath()), ServiceURL: c.kit.URL("/service/mcp")}
	if oauth != nil {
		if _, err := c.deps.Admin.PutOAuthConnection(ctx, actor, site, oauth); err != nil {
			undo(err)
			return
		}
		added.OAuth = true
	}
	if api != nil {
		conn, err := c.deps.Admin.PutAPIConnection(ctx, actor, site, api)
		if err != nil {
			undo(err)
			return
		}
		added.APIIdentity = conn.VerifiedIdentity
		if name := sent("token_name"); name != "" {
			tok, secret, err := c.deps.Admin.IssueServiceToken(ctx, actor, site, name, tokenDays)
			if err != nil {
				c.refusal(w, r, err, func(status int, problem string) {
					c.renderSites(w, r, status, "Site "+site.Slug+" is added, but no service token was issued: "+problem)
				}, "", label)
				return
			}
			added.Token, added.TokenName, added.TokenPre = secret.Reveal(), tok.Name, tok.Prefix
			added.TokenExpiry = siteadmin.TokenExpiry(tok)
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	c.Render(w, r, http.StatusCreated, c.pages.siteAdded, "", added)
}

// filled reads a group of credential fields: nil when all are empty, the
// values when all are given, and a problem when only some are.
func filled(fields []newSiteField, prefix, what string, r *http.Request) (map[string]string, string) {
	values := map[string]string{}
	var missing []string
	for _, f := range fields {
		v := strings.TrimSpace(r.PostFormValue(f.Name))
		if v == "" {
			missing = append(missing, f.Label)
			continue
		}
		values[strings.TrimPrefix(f.Name, prefix)] = v
	}
	switch {
	case len(values) == 0:
		return nil, ""
	case len(missing) > 0:
		return nil, "Fill in every field of " + what + ", or none; empty: " + strings.Join(missing, "; ") + "."
	}
	return values, ""
}

// refusal shows a siteadmin refusal with refuse, prefixed; anything else is
// the unavailable page.
func (c *Console) refusal(w http.ResponseWriter, r *http.Request, err error, refuse func(int, string), prefix string, label func(string) string) {
	var ae *siteadmin.Error
	if errors.As(err, &ae) && ae.Kind != siteadmin.Internal {
		if prefix == "" {
			prefix = "Nothing was saved"
		}
		refuse(http.StatusUnprocessableEntity, prefix+": "+ae.ConsoleSentence(label))
		return
	}
	c.log.Error("console: add a site", zap.Error(err))
	c.unavailable(w)
}

func (c *Console) renderNewSite(w http.ResponseWriter, r *http.Request, status int, v newSiteView) {
	c.Render(w, r, status, c.pages.newSite, "", v)
}
