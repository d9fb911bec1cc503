package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// pageSet holds the console's own pages.
type pageSet struct {
	sites, settings, preflight *pagekit.Page
	newSite, siteAdded         *pagekit.Page
}

func (c *Console) parsePages() {
	c.nav = append(c.nav, NavItem{"Sites", "/console/sites"}, NavItem{"Settings", "/console/settings"})
	c.pages.sites = c.kit.MustParse(files, "templates/sites.html")
	c.pages.settings = c.kit.MustParse(files, "templates/settings.html")
	c.pages.preflight = c.kit.MustParse(files, "templates/preflight.html")
	c.pages.newSite = c.kit.MustParse(files, "templates/new_site.html")
	c.pages.siteAdded = c.kit.MustParse(files, "templates/site_added.html")
}

func (c *Console) registerPages(e *echo.Echo) {
	e.GET("/console/sites", echo.WrapHandler(c.Guard(http.HandlerFunc(c.sitesPage))))
	e.POST("/console/sites", echo.WrapHandler(c.Guard(http.HandlerFunc(c.siteAction))))
	e.GET(NewSitePath, echo.WrapHandler(c.Guard(http.HandlerFunc(c.newSitePage))))
	e.POST(NewSitePath, echo.WrapHandler(c.Guard(http.HandlerFunc(c.addSite))))
	e.GET("/console/settings", echo.WrapHandler(c.Guard(http.HandlerFunc(c.settingsPage))))
	e.POST("/console/settings", echo.WrapHandler(c.Guard(http.HandlerFunc(c.changeSetting))))
	e.GET("/console/preflight", echo.WrapHandler(c.Guard(http.HandlerFunc(c.preflightPage))))
	e.POST("/console/preflight", echo.WrapHandler(c.Guard(http.HandlerFunc(c.runPreflight))))
}

// siteRow is one row of the sites page.
type siteRow struct {
	Slug, DisplayName, Kind, Status, BaseURL string
	Active                                   bool
	Connections                              string
	People, Calls                            int
	ErrorRate                                string
	Preflight                                preflightOutcome
	PreflightURL                             string
	Settings                                 string
	// SharedCallback: the site still uses the shared redirect URI;
	// OwnRedirectURI is the one to switch to.
	SharedCallback bool
	OwnRedirectURI string
	// DisabledBy says who disabled the site, in words; "" when it is
	// active.
	DisabledBy string
	// OwnerPaused: its owner disabled it; the operator may disable it too,
	// making it theirs to enable.
	OwnerPaused bool
}

func (c *Console) sitesPage(w http.ResponseWriter, r *http.Request) {
	notice := ""
	if q := r.URL.Query(); noticeChecked(r, q) {
		notice = siteDone(q)
	}
	c.renderSites(w, r, http.StatusOK, notice)
}

// siteDone is the notice after a site action, from the redirect's query:
// only known words and a well-formed slug, so that a link cannot make the
// console say something of an attacker's choosing.
func siteDone(q url.Values) string {
	slug := q.Get("site")
	if sites.ValidateSlug(slug) != nil {
		return ""
	}
	switch q.Get("done") {
	case "disabled", "enabled":
		return "Site " + slug + " is now " + q.Get("done") + "."
	case "deleted":
		return "Site " + slug + " is deleted, with its connections, tokens and grants."
	case "own-callback":
		return "Site " + slug + " now sends people back to its own redirect URI. Remove the shared one from its OAuth client in the ERP: while the ERP accepts it, a site still on it can be handed this site's sign-ins."
	}
	return ""
}

// settingDone is the notice after a settings change, from the redirect's
// query: a known setting's label only.
func settingDone(q url.Values) string {
	d, ok := livesettings.Lookup(q.Get("setting"))
	switch {
	case !ok:
		return ""
	case q.Get("done") == "changed":
		return d.Label + " is changed; every replica applies it within a second."
	case q.Get("done") == "reset" && inherits(d) && sites.ValidateSlug(q.Get("site")) == nil:
		return d.Label + " of site " + q.Get("site") + " is back to the deployment's."
	case q.Get("done") == "reset":
		return d.Label + " is back to its default."
	}
	return ""
}

// sitesView is the sites page's data: the deployment's findings, then
// the sites.
type sitesView struct {
	Findings []string
	Sites    []siteRow
}

func (c *Console) renderSites(w http.ResponseWriter, r *http.Request, status int, flash string) {
	rows, err := c.siteRows(r)
	if err != nil {
		c.log.Error("list sites for the console", zap.Error(err))
		c.unavailable(w)
		return
	}
	v := sitesView{Sites: rows}
	v.Findings = append(v.Findings, c.proxyFindings()...)
	c.Render(w, r, status, c.pages.sites, flash, v)
}

// proxyFindings says, for each kind of request this replica has seen that
// makes every visitor one address, what that does and what to do; none
// when it has seen none.
func (c *Console) proxyFindings() []string {
	if c.deps.ProxySightings == nil {
		return nil
	}
	var findings []string
	for _, s := range c.deps.ProxySightings() {
		switch s.Kind {
		case sourcelimit.Untrusted:
			findings = append(findings, "Requests reach erpgate through a proxy at "+s.Peer+" that is not in ERPGATE_TRUSTED_PROXIES, so every visitor counts as that one address: "+
				"one person can use up the sign-in and registration limits of everyone. Add the proxy's address to ERPGATE_TRUSTED_PROXIES. "+
				"If "+s.Peer+" is not your proxy, a client wrote the header itself: do not list it, or it could choose its own address. "+
				"(This replica last saw such a request, with "+s.Header+", at "+s.At.UTC().Format("2006-01-02 15:04")+" UTC; other replicas keep their own count.)")
		case sourcelimit.Unread:
			findings = append(findings, "The proxy at "+s.Peer+" names each visitor in the "+s.Header+" header, but erpgate reads only X-Forwarded-For, so every visitor counts as the proxy's address: "+
				"one person can use up the sign-in and registration limits of everyone. Make the proxy send X-Forwarded-For. "+
				"If "+s.Peer+" is not your proxy, remove it from ERPGATE_TRUSTED_PROXIES: a client there wrote the header itself, and could as well name any address in X-Forwarded-For. "+
				"(This replica last saw such a request at "+s.At.UTC().Format("2006-01-02 15:04")+" UTC; other replicas keep their own count.)")
		}
	}
	return findings
}

func (c *Console) siteRows(r *http.Request) ([]siteRow, error) {
	ctx := r.Context()
	list, err := c.deps.Store.ListSites(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	conns, err := c.deps.Store.ListConnectionsOfSites(ctx, ids)
	if err != nil {
		return nil, err
	}
	activity, err := c.deps.Store.ActivityOf(ctx, c.deps.Now().Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	rows := make([]siteRow, 0, len(list))
	for _, s := range list {
		a := activity[s.ID]
		var types []string
		for _, cn := range conns[s.ID] {
			types = append(types, connectionWords(cn.Type))
		}
		row := siteRow{Slug: s.Slug, DisplayName: s.DisplayName, Kind: siteadmin.KindName(s.Kind), Status: string(s.Status), BaseURL: s.BaseURL,
			Active: s.Status == sites.StatusActive, Connections: strings.Join(types, ", "), People: a.People, Calls: a.Calls,
			ErrorRate: "—", PreflightURL: c.kit.URL("/console/preflight?site=" + s.Slug), Settings: c.kit.URL("/console/settings?site=" + s.Slug),
			SharedCallback: s.SharedCallback, OwnRedirectURI: c.kit.URL(sites.SiteCallbackPath(s.Slug))}
		switch s.DisabledBy {
		case sites.ByOperator:
			row.DisabledBy = "by the operator"
		case sites.ByOwner:
			row.DisabledBy = "by its owner"
			row.OwnerPaused = true
		}
		if row.Preflight, err = c.preflightSummary(r, s); err != nil {
			return nil, err
		}
		if len(types) == 0 {
			row.Connections = "none"
		}
		if a.Calls > 0 {
			row.ErrorRate = fmt.Sprintf("%.1f %%", 100*float64(a.Errors)/float64(a.Calls))
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// connectionWords is a connection type as the console's forms call it.
func connectionWords(t sites.ConnectionType) string {
	switch t {
	case sites.ConnectionAPIToken:
		return "API credential"
	case sites.ConnectionOAuth:
		return "OAuth client"
	}
	return strings.ReplaceAll(string(t), "_", " ")
}

// siteAction disables, enables or deletes a site (deletion needs the
// site's slug typed again), or moves it to its own redirect URI, through
// siteadmin.
func (c *Console) siteAction(w http.ResponseWriter, r *http.Request) {
	slug, action := r.PostFormValue("site"), r.PostFormValue("action")
	if slug == "" {
		c.renderSites(w, r, http.StatusNotFound, "No site was named; nothing was changed.")
		return
	}
	site, err := c.deps.Store.GetSiteBySlug(r.Context(), slug)
	if errors.Is(err, sites.ErrNotFound) {
		c.renderSites(w, r, http.StatusNotFound, "There is no site "+slug+" (any more).")
		return
	}
	if err != nil {
		c.log.Error("read site for a console action", zap.Error(err))
		c.unavailable(w)
		return
	}
	done := url.Values{"site": {slug}}
	switch action {
	case "disable", "enable":
		status := string(sites.StatusDisabled)
		if action == "enable" {
			status = string(sites.StatusActive)
		}
		_, err = c.deps.Admin.UpdateSite(r.Context(), Actor(r), site, siteadmin.SiteChange{Status: &status})
		done.Set("done", status)
	case "delete":
		if strings.TrimSpace(r.PostFormValue("confirm")) != slug {
			c.renderSites(w, r, http.StatusUnprocessableEntity, "Site "+slug+" was not deleted: type its short name exactly to confirm.")
			return
		}
		err = c.deps.Admin.DeleteSite(r.Context(), Actor(r), site)
		done.Set("done", "deleted")
	case "own-callback":
		shared := false
		_, err = c.deps.Admin.UpdateSite(r.Context(), Actor(r), site, siteadmin.SiteChange{SharedCallback: &shared})
		done.Set("done", "own-callback")
	default:
		c.renderSites(w, r, http.StatusBadRequest, "That action is not known; nothing was changed.")
		return
	}
	if err != nil {
		var ae *siteadmin.Error
		if errors.As(err, &ae) && ae.Kind != siteadmin.Internal {
			c.renderSites(w, r, http.StatusUnprocessableEntity, nothingChanged(ae))
			return
		}
		c.log.Error("console site action", zap.Error(err))
		c.unavailable(w)
		return
	}
	http.Redirect(w, r, c.kit.URL("/console/sites?"+noticeQuery(r, done)), http.StatusSeeOther)
}

// nothingChanged is siteadmin's refusal of a site action or a settings
// change as the console, a page, tells it (ConsoleSentence: the plain
// words, not the admin API's), saying once that nothing was changed.
func nothingChanged(ae *siteadmin.Error) string {
	sentence := ae.ConsoleSentence(nil)
	if strings.Contains(strings.ToLower(sentence), "nothing was changed") {
		return sentence
	}
	return "Nothing was changed: " + sentence
}

func (c *Console) unavailable(w http.ResponseWriter) {
	c.renderError(w, http.StatusServiceUnavailable, pagekit.ErrorPage{
		Title:     "The console cannot show this right now",
		Message:   "erpgate could not read or change what this page needs.",
		Next:      "Try again in a moment. If it keeps happening, the server log has the details.",
		Reference: pagekit.NewReference(),
	})
}

// settingRow is one setting as the settings page shows it.
type settingRow struct {
	Name, Label, Help, Type string
	Value, Default          string
	// Field is what the box to change it holds: the value in force, or,
	// for a site's setting that takes the deployment's when it has none of
	// its own (Inherits), only its own (empty: the deployment's), so that
	// saving the form unchanged does not pin the site to the deployment's
	// number; Placeholder says so in the empty box.
	Field, Placeholder string
	Inherits           bool
	Source             string
	Changed            string
	Overridden         bool
	// Choices lists what a list may hold (a site's tools), if known.
	Choices []string
	// Empty says what an empty value means.
	Empty string
	// Also is, for a site's additive setting, the deployment's value,
	// which applies as well.
	Also string
	// Lowered says, for a site's own value above the deployment's of a
	// setting that only lowers it (max_records, the deployment's lowered
	// later), that the deployment's applies; Value is then the
	// deployment's.
	Lowered string
}

type settingsView struct {
	Site     string // slug; empty for the deployment
	Sites    []string
	Rows     []settingRow
	Problem  string
	Editing  string
	Attempt  string
	SitesURL string
}

func (c *Console) settingsPage(w http.ResponseWriter, r *http.Request) {
	notice := ""
	if q := r.URL.Query(); noticeChecked(r, q) {
		notice = settingDone(q)
	}
	c.renderSettings(w, r, http.StatusOK, r.URL.Query().Get("site"), notice, "", "", "")
}

func (c *Console) renderSettings(w http.ResponseWriter, r *http.Request, status int, slug, flash, problem, editing, attempt string) {
	ctx := r.Context()
	list, err := c.deps.Store.ListSites(ctx)
	if err != nil {
		c.log.Error("list sites for the console", zap.Error(err))
		c.unavailable(w)
		return
	}
	v := settingsView{Site: slug, Problem: problem, Editing: editing, Attempt: attempt}
	siteID, kind := uuid.Nil, ""
	for _, s := range list {
		v.Sites = append(v.Sites, s.Slug)
		if s.Slug == slug {
			siteID, kind = s.ID, s.Kind
		}
	}
	if slug != "" && siteID == uuid.Nil {
		c.renderError(w, http.StatusNotFound, pagekit.ErrorPage{Title: "There is no such site", Message: "No site has this short name.", Next: "Choose a site from the sites page."})
		return
	}
	snap := c.deps.Settings.Fresh(ctx)
	scope := livesettings.Deployment
	if siteID != uuid.Nil {
		scope = livesettings.Site
	}
	for _, d := range livesettings.Defs {
		if d.Scope&scope == 0 {
			continue
		}
		value, source, at := snap.Effective(siteID, d.Name)
		row := settingRow{Name: d.Name, Label: d.Label, Help: d.Help, Type: string(d.Type), Value: livesettings.Format(value), Empty: "nothing"}
		row.Field = row.Value
		row.Inherits = siteID != uuid.Nil && inherits(d)
		if row.Inherits {
			// A site's own call ceilings: empty is the deployment's.
			if source != livesettings.SourceSite {
				row.Field = ""
			}
			dv, _, _ := snap.Effective(uuid.Nil, d.Name)
			row.Placeholder = "empty: the deployment's, " + livesettings.Format(dv)
		}
		if in, ok := snap.InForce(siteID, d.Name); ok && source == livesettings.SourceSite {
			if shown := livesettings.Format(in); shown != row.Value {
				row.Lowered = "This site's own " + row.Value + " is above the deployment's " + shown + ", so " + shown + " applies."
				row.Value = shown
			}
		}
		if d.Name == livesettings.Tools {
			row.Empty = "every tool"
		}
		if d.Type == livesettings.TypeBool && row.Value == "" {
			// A switch with no default of its own (service_writes) is off.
			row.Value = livesettings.Format(false)
		}
		if siteID != uuid.Nil && d.Additive {
			dv, _, _ := snap.Effective(uuid.Nil, d.Name)
			// The additive settings are the redaction pattern lists,
			// said in a sentence, one pattern after another.
			row.Empty, row.Also = "nothing of its own", strings.ReplaceAll(livesettings.Format(dv), "\n", ", ")
			if row.Also == "" {
				row.Also = "none"
			}
		}
		switch source {
		case livesettings.SourceSite:
			row.Source, row.Overridden = "set for this site in the console", true
		case livesettings.SourceDeployment:
			row.Source, row.Overridden = "set for the deployment in the console", siteID == uuid.Nil
			if siteID != uuid.Nil {
				row.Source = "the deployment's value (set in the console)"
			}
		default:
			row.Source = "built-in default"
			if d.Env != "" {
				row.Source = "default, from " + d.Env
			}
			if siteID != uuid.Nil && d.Additive {
				row.Source = "nothing set for this site"
			}
			if row.Inherits {
				row.Source = "the deployment's value, " + row.Source
			}
		}
		if !at.IsZero() {
			row.Changed = at.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		if d.Name == livesettings.Tools && kind != "" {
			row.Choices = append(append([]string{}, livesettings.ToolGroups...), c.deps.Admin.ToolNames(kind)...)
		}
		v.Rows = append(v.Rows, row)
	}
	c.Render(w, r, status, c.pages.settings, flash, v)
}

func (c *Console) changeSetting(w http.ResponseWriter, r *http.Request) {
	slug, name := r.PostFormValue("site"), r.PostFormValue("name")
	var site *sites.Site
	if slug != "" {
		s, err := c.deps.Store.GetSiteBySlug(r.Context(), slug)
		if errors.Is(err, sites.ErrNotFound) {
			c.renderSettings(w, r, http.StatusNotFound, "", "", "There is no site "+slug+" (any more); nothing was changed.", "", "")
			return
		} else if err != nil {
			c.log.Error("read site for a settings change", zap.Error(err))
			c.unavailable(w)
			return
		}
		site = &s
	}
	reset := r.PostFormValue("reset") != ""
	value := r.PostFormValue("value")
	if d, ok := livesettings.Lookup(name); ok && site != nil && inherits(d) && strings.TrimSpace(value) == "" {
		// An empty box of a site's own number: the deployment's again.
		reset = true
	}
	if r.PostFormValue("type") == string(livesettings.TypeBool) && !reset && value == "" {
		value = "off"
	}
	_, err := c.deps.Admin.ChangeSetting(r.Context(), Actor(r), site, name, value, reset)
	if err != nil {
		var ae *siteadmin.Error
		if errors.As(err, &ae) && ae.Kind != siteadmin.Internal {
			c.renderSettings(w, r, http.StatusUnprocessableEntity, slug, "", nothingChanged(ae), name, value)
			return
		}
		c.log.Error("console settings change", zap.Error(err))
		c.unavailable(w)
		return
	}
	done := url.Values{"setting": {name}, "done": {"changed"}}
	if reset {
		done.Set("done", "reset")
	}
	if slug != "" {
		done.Set("site", slug)
	}
	http.Redirect(w, r, c.kit.URL("/console/settings?"+noticeQuery(r, done)), http.StatusSeeOther)
}

// inherits reports whether a site without a value of its own for d has
// the deployment's (the call ceilings), not d's default nor nothing.
func inherits(d livesettings.Def) bool {
	return d.Scope&livesettings.Deployment != 0 && d.Scope&livesettings.Site != 0 && !d.Additive
}
