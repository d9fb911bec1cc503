package register

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

// kindInfo is what the pages say about a kind of ERP.
type kindInfo struct {
	Kind  string
	Label string
}

// kindLabels names the kinds registration knows how to explain; a kind is
// offered only when its connector can also prove administrators.
var kindLabels = []kindInfo{{"frappe", "Frappe / ERPNext"}, {"acumatica", "Acumatica"}}

func (h *Handler) kinds() []kindInfo {
	var out []kindInfo
	for _, k := range kindLabels {
		if h.deps.Proofs.Supports(k.Kind) {
			out = append(out, k)
		}
	}
	return out
}

func labelOf(kind string) string {
	for _, k := range kindLabels {
		if k.Kind == kind {
			return k.Label
		}
	}
	return kind
}

// startForm is the start page's form, as typed: an error shows it again
// with nothing lost.
type startForm struct {
	Kind            string
	DisplayName     string
	BaseURL         string
	DefaultCompany  string
	Tenant          string
	EndpointName    string
	EndpointVersion string
}

type startPage struct {
	Kinds []kindInfo
	Form  startForm
	Error string
	CSRF  string
}

const startPurpose = "register:start"

func (h *Handler) serveStart(w http.ResponseWriter, r *http.Request) {
	browser := h.ensureBrowser(w, r)
	h.renderStart(w, http.StatusOK, browser, startForm{Kind: "frappe", EndpointName: "Default", EndpointVersion: "24.200.001"}, "")
}

func (h *Handler) renderStart(w http.ResponseWriter, status int, browser string, f startForm, problem string) {
	page := startPage{Kinds: h.kinds(), Form: f, Error: problem, CSRF: pagekit.CSRFToken(browser, startPurpose)}
	if err := h.kit.Render(w, status, h.pages.start, page, pagekit.Options{FormAction: []string{"'self'"}}); err != nil {
		h.log.Error("render registration start", zap.Error(err))
	}
}

// settingsOf builds the connector settings of the start form.
func settingsOf(f startForm) (json.RawMessage, error) {
	typed := map[string]string{"default_company": f.DefaultCompany, "tenant": f.Tenant, "endpoint_name": f.EndpointName, "endpoint_version": f.EndpointVersion}
	return siteadmin.FormSettings(f.Kind, func(key string) string { return typed[key] })
}

// startLabel is the start form's label of what siteadmin's errors name:
// its own for the name and address, the pages' for a setting.
func startLabel(field string) string {
	switch field {
	case "display_name":
		return "Name of the site"
	case "base_url":
		return "The ERP's address"
	}
	return siteadmin.SettingLabel(field)
}

func (h *Handler) postStart(w http.ResponseWriter, r *http.Request) {
	browser := h.checkPost(w, r, startPurpose)
	if browser == "" {
		return
	}
	ctx := r.Context()
	f := startForm{}
	for field, dst := range map[string]*string{
		"kind": &f.Kind, "display_name": &f.DisplayName, "base_url": &f.BaseURL, "default_company": &f.DefaultCompany,
		"tenant": &f.Tenant, "endpoint_name": &f.EndpointName, "endpoint_version": &f.EndpointVersion,
	} {
		*dst = strings.TrimSpace(r.PostForm.Get(field))
	}
	// No registration exists yet: a refusal is counted in the minute's
	// summary of refused starts, not stored as a row of its own.
	actor := siteadmin.Registrant("")
	// The address as typed may carry a pasted password: the event keeps
	// what can be shown of it.
	details := map[string]any{"kind": f.Kind, "base_url": sites.ShownBaseURL(f.BaseURL)}
	if !h.deps.Proofs.Supports(f.Kind) {
		h.renderStart(w, http.StatusBadRequest, browser, f, "Choose the kind of your ERP.")
		return
	}
	if f.Kind == "acumatica" && f.Tenant == "" {
		// The administrator check reads an inquiry of the tenant.
		h.renderStart(w, http.StatusBadRequest, browser, f, "Give the Acumatica tenant's login name, as on its sign-in page.")
		return
	}
	// Past the deployment's bound, or the network's, nothing is looked up
	// or contacted: the address's host name, and the ERP, would be asked
	// for every start of anyone's. reserve asks again, under a lock.
	bounds := bounds{all: h.deps.MaxPending, perNetwork: h.deps.MaxPendingPerNetwork, network: sourcelimit.Network(h.deps.ClientIP(r))}
	if err := h.store.full(ctx, bounds); err != nil {
		h.startRefused(w, "count waiting registrations", err)
		return
	}
	// Whether the address is registered already is not checked here: that
	// would tell anyone which ERPs use erpgate. CreateSite refuses it once
	// the sign-in at the ERP proved the person its administrator.
	settings, err := settingsOf(f)
	var checked siteadmin.CheckedSite
	if err == nil {
		checked, err = h.deps.Admin.CheckNewSite(ctx, siteadmin.NewSite{Kind: f.Kind, DisplayName: f.DisplayName, BaseURL: f.BaseURL, Settings: settings})
	}
	if err != nil {
		var se *siteadmin.Error
		if errors.As(err, &se) && se.Kind != siteadmin.Internal {
			h.deps.Admin.RecordAnonymousRefusal(ctx, actor, uuid.Nil, "", siteadmin.ActionRegisterStart, string(se.Kind), details, err)
			h.renderStart(w, http.StatusBadRequest, browser, f, se.PeopleSentence(startLabel))
			return
		}
		h.internal(w, "check site", err)
		return
	}
	details["base_url"] = checked.BaseURL
	// The place is held before the ERP is contacted, and kept whether it
	// answers or not (a failed start's for failedStartHold only): anyone
	// may name any address, and each start makes erpgate send it a
	// request, so every such start counts against the bounds, and starts
	// at once cannot all pass them before one is stored.
	id, err := h.store.reserve(ctx, pendingReg{Kind: checked.Kind, DisplayName: checked.DisplayName, BaseURL: checked.BaseURL,
		Settings: checked.Settings, IdentityKey: checked.IdentityKey}, h.deps.TTL, bounds)
	if err != nil {
		h.startRefused(w, "hold a registration's place", err)
		return
	}
	if err := h.deps.Admin.Reachable(ctx, checked); err != nil {
		if rerr := h.store.release(ctx, id, failedStartHold); rerr != nil {
			// The place holds until the registration's TTL instead.
			h.log.Warn("a failed registration start's place not shortened", zap.Error(rerr))
		}
		var se *siteadmin.Error
		if errors.As(err, &se) && se.Kind != siteadmin.Internal {
			h.deps.Admin.RecordAnonymousRefusal(ctx, actor, uuid.Nil, "", siteadmin.ActionRegisterStart, string(se.Kind), details, err)
			h.renderStart(w, http.StatusBadGateway, browser, f, se.PeopleSentence(nil))
			return
		}
		h.internal(w, "reach ERP", err)
		return
	}
	if err := h.store.claim(ctx, id, browser); err != nil {
		h.internal(w, "open registration", err)
		return
	}
	h.atBound.Store(false)
	h.deps.Admin.Record(ctx, siteadmin.Registrant(id.String()), uuid.Nil, "", siteadmin.ActionRegisterStart, details, nil)
	http.Redirect(w, r, h.link(id, ""), http.StatusSeeOther)
}

// startRefused answers a start that a bound refused (*errFull,
// *errNetworkFull), or that failed on erpgate's side.
func (h *Handler) startRefused(w http.ResponseWriter, what string, err error) {
	if full := (*errFull)(nil); errors.As(err, &full) {
		h.refuseFull(w, full)
		return
	}
	if full := (*errNetworkFull)(nil); errors.As(err, &full) {
		h.refuseNetwork(w, full)
		return
	}
	h.internal(w, what, err)
}

// alreadyRegistered tells the person, once their sign-in at the ERP proved
// them its administrator, that the address is taken and how its
// administrators manage it, naming nothing of the site: not its short
// name, display name or owner.
func (h *Handler) alreadyRegistered(w http.ResponseWriter, kind string) {
	what := "This ERP address"
	if conn, ok := h.deps.Registry.Get(kind); ok && conn.SiteRules().IdentityName != "" {
		what = "This ERP address with this " + conn.SiteRules().IdentityName
	}
	h.message(w, http.StatusConflict, message{Title: "This ERP is already registered",
		Message: what + " is already registered with erpgate, so it cannot be registered again.",
		Causes: []string{
			"Its administrators manage it on its owner page: the site's MCP address (the one people add to their AI clients, ending in /mcp) with /manage in place of /mcp.",
			"Only administrators of the ERP can open the owner page: they sign in there with their ERP account.",
		},
		Next: "If you administer this ERP, ask a colleague who uses erpgate for the site's MCP address, or ask your erpgate operator.",
		Link: h.kit.URL("/"), LinkText: "erpgate's home page"})
}

// nameTaken tells the person that the site's short name, chosen when the
// registration began and named by the redirect URI of the OAuth client
// they made, was taken before their sign-in: the registration cannot
// finish under another name, since the client sends people back to that
// one. It names nothing of the other site.
func (h *Handler) nameTaken(w http.ResponseWriter, p pendingReg) {
	h.message(w, http.StatusConflict, message{Title: "This registration cannot finish",
		Message: "The short name erpgate chose for " + p.DisplayName + " when this registration began was taken by another site before you signed in, " +
			"and the OAuth client you made in the ERP sends people back to an address with that name. Nothing was registered.",
		Next: "In the ERP, delete the OAuth client you made for this registration, then start the registration again: erpgate chooses a new name and shows the redirect URI to use.",
		Link: h.kit.URL("/register"), LinkText: "Start the registration again"})
}

// clientPage is the OAuth client step.
type clientPage struct {
	ID          string
	Kind        string
	KindLabel   string
	DisplayName string
	BaseURL     string
	Tenant      string
	RedirectURI string
	AppName     string
	Scopes      string
	ClientID    string
	Error       string
	CSRF        string
	ExpiresIn   string
}

func clientPurpose(id uuid.UUID) string { return "register:" + id.String() }

// scopesOf is what the page tells the administrator erpgate asks for.
var scopesOf = map[string]string{"frappe": "all openid", "acumatica": "api openid profile email offline_access"}

func (h *Handler) serveRegistration(w http.ResponseWriter, r *http.Request) {
	browser := h.browser(r)
	p, ok := h.openRegistration(w, r, browser)
	if !ok {
		return
	}
	if p.Stage == stageRegistered {
		h.renderResult(w, r, http.StatusOK, browser, p, resultExtra{})
		return
	}
	h.renderClient(w, http.StatusOK, browser, p, p.ClientID, "")
}

func (h *Handler) renderClient(w http.ResponseWriter, status int, browser string, p pendingReg, clientID, problem string) {
	var s struct {
		Tenant string `json:"tenant"`
	}
	_ = json.Unmarshal(p.Settings, &s)
	page := clientPage{ID: h.linkID(p.ID), Kind: p.Kind, KindLabel: labelOf(p.Kind), DisplayName: p.DisplayName, BaseURL: p.BaseURL,
		Tenant: s.Tenant, RedirectURI: h.deps.Proofs.RedirectURI(p.callbackPath()), AppName: "erpgate", Scopes: scopesOf[p.Kind],
		ClientID: clientID, Error: problem, CSRF: pagekit.CSRFToken(browser, clientPurpose(p.ID))}
	if err := h.kit.Render(w, status, h.pages.client, page, pagekit.Options{FormAction: h.formActionTo(p), Script: true}); err != nil {
		h.log.Error("render registration client step", zap.Error(err))
	}
}

// postClient takes the OAuth client and sends the browser to the ERP to
// prove its ownership.
func (h *Handler) postClient(w http.ResponseWriter, r *http.Request) {
	p, browser, ok := h.registrationPost(w, r, stageClient)
	if !ok {
		return
	}
	clientID := strings.TrimSpace(r.PostForm.Get("client_id"))
	secret := strings.TrimSpace(r.PostForm.Get("client_secret"))
	actor := siteadmin.Registrant(p.ID.String())
	if clientID == "" || secret == "" {
		h.renderClient(w, http.StatusBadRequest, browser, p, clientID, "Paste both the client id and the client secret of the OAuth client you created.")
		return
	}
	if problem := pastedProblem("client id", clientID, 200) + pastedProblem("client secret", secret, 500); problem != "" {
		// A NUL cannot be stored (PostgreSQL refuses it) and no OAuth
		// client has a control character: say so here rather than fail
		// the step. The id is kept without its control characters.
		h.renderClient(w, http.StatusBadRequest, browser, p, strings.Map(dropControl, clientID), strings.TrimSpace(problem))
		return
	}
	first, err := h.store.setClient(r.Context(), p.ID, clientID, secrets.Secret(secret))
	if err != nil {
		if errors.Is(err, errUnknown) {
			h.unknown(w)
			return
		}
		h.internal(w, "save client", err)
		return
	}
	// Whoever holds a registration may paste a client again and again,
	// from many addresses, before anything is proven: the registration's
	// first client is its audit row, the others are logged only. The
	// client that is proven is named by the register_proof row.
	if first {
		h.deps.Admin.Record(r.Context(), actor, uuid.Nil, "", siteadmin.ActionRegisterClient, map[string]any{"client_id": clientID, "base_url": p.BaseURL}, nil)
	} else {
		h.log.Info("registration client changed", zap.String("registration", p.ID.String()), zap.String("client_id", clientID),
			zap.String("source", sourcelimit.Source(h.deps.ClientIP(r))))
	}
	h.begin(w, r, p)
}

// pastedProblem says what is wrong with a pasted OAuth client value, as a
// sentence ending in a space, or "" when nothing is.
func pastedProblem(field, v string, limit int) string {
	switch {
	case !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl):
		return "The " + field + " holds a control character (or bytes that are not text), which an OAuth client never has, so nothing was registered: copy it again from the ERP. "
	case utf8.RuneCountInString(v) > limit:
		return fmt.Sprintf("The %s is longer than %d characters, longer than erpgate accepts, so nothing was registered: copy it again from the ERP. ", field, limit)
	}
	return ""
}

// dropControl drops control characters in strings.Map.
func dropControl(r rune) rune {
	if unicode.IsControl(r) || r == utf8.RuneError {
		return -1
	}
	return r
}

// postProve starts the proof again with the client already given (after a
// refusal, signed in as an administrator this time).
func (h *Handler) postProve(w http.ResponseWriter, r *http.Request) {
	p, _, ok := h.registrationPost(w, r, stageClient)
	if !ok {
		return
	}
	if p.ClientID == "" {
		http.Redirect(w, r, h.link(p.ID, ""), http.StatusSeeOther)
		return
	}
	h.begin(w, r, p)
}

// registrationPost guards a post on the path's registration: the checks
// of every post, the registration open in this browser and at stage (else
// the browser goes back to its page). It answers itself when it reports
// false.
func (h *Handler) registrationPost(w http.ResponseWriter, r *http.Request, stage string) (pendingReg, string, bool) {
	id, _, ok := h.parseID(r)
	if !ok {
		h.unknown(w)
		return pendingReg{}, "", false
	}
	browser := h.checkPost(w, r, clientPurpose(id))
	if browser == "" {
		return pendingReg{}, "", false
	}
	p, ok := h.openRegistration(w, r, browser)
	if !ok {
		return pendingReg{}, "", false
	}
	if p.Stage != stage {
		http.Redirect(w, r, h.link(p.ID, ""), http.StatusSeeOther)
		return pendingReg{}, "", false
	}
	return p, browser, true
}

func (h *Handler) begin(w http.ResponseWriter, r *http.Request, p pendingReg) {
	if err := h.deps.Proofs.Begin(w, r, Purpose, p.ID.String()); err != nil {
		h.internal(w, "begin proof", err)
	}
}

// target is the proof's target: the pending registration's ERP and OAuth
// client, read again at each step so that no secret is kept elsewhere.
func (h *Handler) target(ctx context.Context, ref string) (erpadmin.Target, error) {
	id, err := uuid.Parse(ref)
	if err != nil {
		return erpadmin.Target{}, errUnknown
	}
	p, _, err := h.store.load(ctx, id)
	if err != nil {
		return erpadmin.Target{}, err
	}
	if p.Stage != stageClient || p.ClientID == "" {
		return erpadmin.Target{}, errUnknown
	}
	base, err := url.Parse(p.BaseURL)
	if err != nil {
		return erpadmin.Target{}, fmt.Errorf("register: base URL: %w", err)
	}
	slug := p.Slug
	if slug == "" {
		slug = "registration"
	}
	return erpadmin.Target{Kind: p.Kind,
		Site:         connector.Site{Slug: slug, Kind: p.Kind, DisplayName: p.DisplayName, BaseURL: base, Settings: p.Settings},
		Client:       connector.OAuthClient{ID: p.ClientID, Secret: p.Secret},
		CallbackPath: p.callbackPath()}, nil
}

// proofDone continues once the ERP sent the browser back: the site is
// registered only when the sign-in proved an administrator.
func (h *Handler) proofDone(w http.ResponseWriter, r *http.Request, ref string, proof erpadmin.Proof, perr error) {
	ctx := r.Context()
	actor := siteadmin.Registrant(ref)
	refuse := func(reason string, status int, m message) {
		refusal := &siteadmin.Error{Kind: siteadmin.Rejected, Message: reason}
		// Whoever holds a registration may go to the ERP and back again
		// and again, from many addresses, and the ERP is theirs, not yet
		// proven: the person it names (not an administrator) is whoever
		// it likes. Every refusal here is counted in the minute's row of
		// its kind (the reason's first word, one of erpgate's own); the
		// log line keeps each, with the person the ERP named.
		code, _, _ := strings.Cut(reason, ":")
		h.deps.Admin.RecordAnonymousRefusal(ctx, actor, uuid.Nil, "", siteadmin.ActionRegisterProof, code, map[string]any{}, refusal)
		h.message(w, status, m)
	}
	if ref == "" || errors.Is(perr, erpadmin.ErrState) {
		refuse("state: the sign-in is unknown, expired or from another browser", http.StatusBadRequest, message{
			Title:   "This sign-in cannot be used",
			Message: "The sign-in at the ERP was finished in another browser, took too long, or its registration has expired, so it proves nothing and nothing was registered.",
			Next:    "Start the registration again in one browser and finish it within " + h.ttlText() + ".",
			Link:    h.kit.URL("/register"), LinkText: "Start a registration"})
		return
	}
	browser := h.browser(r)
	id, _ := uuid.Parse(ref)
	p, err := h.store.get(ctx, id, browser)
	if errors.Is(err, errUnknown) {
		refuse("state: the registration is not open in this browser", http.StatusNotFound, message{Title: "This registration is not open",
			Message: "erpgate has no open registration for this sign-in in this browser; nothing was registered.",
			Next:    "Start the registration again.", Link: h.kit.URL("/register"), LinkText: "Start a registration"})
		return
	}
	if err != nil {
		h.internal(w, "load registration after proof", err)
		return
	}
	retry := message{FormTo: h.formActionTo(p), Link: h.link(p.ID, ""), LinkText: "Back to the OAuth client step",
		FormAction: h.link(p.ID, "/prove"), FormButton: "Sign in to the ERP again", CSRF: pagekit.CSRFToken(browser, clientPurpose(p.ID))}
	switch {
	case errors.Is(perr, erpadmin.ErrCancelled):
		m := retry
		m.Title, m.Message = "The sign-in at the ERP was cancelled", "You cancelled the sign-in at "+p.BaseURL+", or the ERP refused it, so nothing was registered."
		m.Next = "Sign in again and allow erpgate's access when the ERP asks."
		refuse("cancelled: the sign-in at the ERP was cancelled or refused", http.StatusBadRequest, m)
		return
	case errors.Is(perr, erpadmin.ErrClientRefused):
		m := retry
		m.Title = "The ERP refused the OAuth client"
		m.Message = "The ERP at " + p.BaseURL + " did not accept the client id and secret you pasted, so nothing was registered."
		m.Causes = []string{"The client secret is not the one the ERP shows for this client (copy it again, without spaces).",
			"The OAuth client's redirect URI is not exactly " + h.deps.Proofs.RedirectURI(p.callbackPath()) + ".", "The OAuth client is not active."}
		m.Next = "Check the OAuth client in the ERP, then paste its client id and secret again."
		m.FormAction, m.FormButton = "", ""
		refuse("client_refused: the ERP refused the OAuth client", http.StatusBadRequest, m)
		return
	case errors.Is(perr, erpadmin.ErrUnreachable), errors.Is(perr, erpadmin.ErrAdminCheck), errors.Is(perr, erpadmin.ErrNoIdentity):
		m := retry
		m.Title = "The ERP did not complete the check"
		m.Message = "erpgate could not finish checking your account at " + p.BaseURL + " (the ERP could not be reached, or did not say who you are or what roles you have), so nothing was registered."
		m.Next = "Try again in a moment."
		refuse("unreachable: "+errText(perr), http.StatusBadGateway, m)
		return
	case perr != nil:
		h.internal(w, "proof", perr)
		return
	case !proof.Check.Admin:
		m := retry
		m.Title = "You are not an administrator of this ERP"
		m.Message = fmt.Sprintf("You signed in to %s as %s, who %s. Only an administrator of the ERP can register it with erpgate, so nothing was registered.",
			p.BaseURL, nameOf(proof.User), proof.Check.Evidence)
		m.Next = "Sign out of the ERP, then sign in again with an administrator's account (or ask your ERP administrator to register it)."
		refuse("not_admin: "+proof.User.ID+" "+proof.Check.Evidence, http.StatusForbidden, m)
		return
	}
	h.deps.Admin.Record(ctx, actor, uuid.Nil, "", siteadmin.ActionRegisterProof,
		map[string]any{"erp_user": proof.User.ID, "evidence": proof.Check.Evidence, "base_url": p.BaseURL, "client_id": p.ClientID}, nil)
	h.registerSite(w, r, p, proof)
}

func errText(err error) string { return strings.TrimPrefix(err.Error(), "erpadmin: ") }

func nameOf(u connector.UpstreamUser) string {
	if u.DisplayName != "" && u.DisplayName != u.ID {
		return u.DisplayName + " (" + u.ID + ")"
	}
	return u.ID
}

// registerSite creates the site with its OAuth client, as the ERP
// administrator the proof found.
func (h *Handler) registerSite(w http.ResponseWriter, r *http.Request, p pendingReg, proof erpadmin.Proof) {
	ctx := context.WithoutCancel(r.Context())
	admin := siteadmin.ERPAdmin(proof.User.ID)
	var site sites.Site
	var err error
	if p.Slug != "" {
		// The ERP's OAuth client has this name's redirect URI: there is
		// no other to try.
		site, err = h.deps.Admin.CreateSite(ctx, admin, siteadmin.NewSite{Slug: p.Slug, Kind: p.Kind,
			DisplayName: p.DisplayName, BaseURL: p.BaseURL, Settings: p.Settings})
	} else {
		for range 3 {
			site, err = h.deps.Admin.CreateSite(ctx, admin, siteadmin.NewSite{Slug: newSlug(p.DisplayName), Kind: p.Kind,
				DisplayName: p.DisplayName, BaseURL: p.BaseURL, Settings: p.Settings, SharedCallback: true})
			if !errors.Is(err, sites.ErrSlugTaken) {
				break
			}
		}
	}
	if err != nil {
		if errors.Is(err, sites.ErrBaseURLTaken) {
			h.alreadyRegistered(w, p.Kind)
			return
		}
		if p.Slug != "" && errors.Is(err, sites.ErrSlugTaken) {
			h.nameTaken(w, p)
			return
		}
		h.internal(w, "create site", err)
		return
	}
	if _, err := h.deps.Admin.PutOAuthConnection(ctx, admin, site, map[string]string{"client_id": p.ClientID, "client_secret": p.Secret.Reveal()}); err != nil {
		_ = h.deps.Admin.DeleteSite(ctx, admin, site)
		h.internal(w, "save OAuth client", err)
		return
	}
	if err := h.store.markRegistered(ctx, p.ID, site.ID, proof.User.ID); err != nil {
		h.internal(w, "mark registered", err)
		return
	}
	h.keepToken(ctx, p.ID, site, proof.User.ID, proof.Tokens(), p.ExpiresAt)
	// The new site's preflight runs in the background; its result is on
	// the console's sites page and in the admin API.
	h.deps.Admin.StartPreflight(ctx, admin, site)
	http.Redirect(w, r, h.link(p.ID, ""), http.StatusSeeOther)
}
