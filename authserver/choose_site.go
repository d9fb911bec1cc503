package authserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/store/sites"
)

func (s *Server) renderChooseSite(w http.ResponseWriter, status int, p chooseSitePage) {
	p.Action = s.publicURL("/oauth/site")
	// The form's answer redirects to the ERP, whose origin is not known
	// before the user types it.
	s.renderPage(w, status, s.pages.chooseSite, []string{"'self'", "https:", "http:"}, p)
}

// serveChooseSiteOpened answers a GET of /oauth/site, where the typed
// address is posted and its refusals show: opened from history or another
// tab, it has no sign-in to go on with.
func (s *Server) serveChooseSiteOpened(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	s.renderMessage(w, http.StatusMethodNotAllowed, messagePage{
		Title:   "This sign-in step cannot be opened on its own",
		Message: "This address takes the ERP address typed on erpgate's sign-in page; opened again, it has no sign-in to go on with.",
		Next:    "Go back to your AI client and connect again.",
	})
}

// serveChooseSite takes the ERP address typed on /mcp's sign-in page,
// finds the registered site at that address (its origin, under the site's
// virtual directory when it has one) and sends the browser to its sign-in. Whatever is typed, the answer never says which sites exist:
// the page only says whether the address was recognised.
func (s *Server) serveChooseSite(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if secs, ok := s.limited(w, r, s.chooseSiteLimit, "choose_site"); !ok {
		s.tooManyRequests(w, secs)
		return
	}
	flowID, browser, ok := s.checkForm(w, r)
	if !ok {
		return
	}
	page := chooseSitePage{FlowID: flowID, CSRF: csrfToken(browser, flowID),
		ERPURL: strings.TrimSpace(r.PostForm.Get("erp_url")), Tenant: strings.TrimSpace(r.PostForm.Get("tenant"))}
	if _, err := s.deps.Store.PeekFlow(ctx, flowID, browser, storage.StageChooseSite); err != nil {
		s.flowError(w, err)
		return
	}
	origin, typedPath, err := typedAddress(page.ERPURL, s.deps.IsDevHost)
	if err != nil {
		page.Error = "That does not look like an ERP address. Type it as you see it in your browser, for example https://erp.example.com."
		s.renderChooseSite(w, http.StatusUnprocessableEntity, page)
		return
	}
	matches, err := s.sitesAtAddress(ctx, origin, typedPath, page.Tenant)
	if err != nil {
		s.pageError(w, "match ERP address", err)
		return
	}
	switch {
	case len(matches) == 0:
		page.Error = "erpgate has no ERP at that address that you can sign in to. Check the address, or ask your administrator which address to use."
		s.renderChooseSite(w, http.StatusUnprocessableEntity, page)
		return
	case len(matches) > 1:
		page.AskTenant = true
		page.Error = "Several companies use that address. Type your company or tenant name as well."
		s.renderChooseSite(w, http.StatusUnprocessableEntity, page)
		return
	}
	site := matches[0]
	verifier, challenge, err := newPKCE()
	if err != nil {
		s.pageError(w, "choose site", err)
		return
	}
	if _, err := s.deps.Store.StepFlow(ctx, flowID, browser, storage.FlowStep{
		From: storage.StageChooseSite, To: storage.StageERP, SiteID: site.site.ID, Verifier: verifier,
	}); err != nil {
		s.flowError(w, err)
		return
	}
	s.redirectToERP(w, r, site, flowID, challenge)
}

// typedAddress turns what a user typed into the origin sites are stored
// under and the path typed after it. A missing scheme means https. Users
// paste the URL of whatever ERP page they have open, so the path is only
// matched against sites' virtual directories.
func typedAddress(typed string, isDevHost func(string) bool) (origin, path string, err error) {
	if typed == "" {
		return "", "", errors.New("empty")
	}
	if !strings.Contains(typed, "://") {
		typed = "https://" + typed
	}
	u, err := url.Parse(typed)
	if err != nil || u.Host == "" {
		return "", "", errors.New("not a URL")
	}
	origin, err = sites.NormalizeBaseURL(u.Scheme+"://"+u.Host, isDevHost)
	return origin, u.Path, err
}

// sitesAtAddress returns the active sites that offer sign-in at origin and
// whose virtual directory (none for most) the typed path is under,
// compared without regard to case as IIS does; when sites at several
// directories match, only the deepest. They are narrowed to identity when
// one is given: the identity key their connector declares (Acumatica's
// tenant), compared without regard to case.
func (s *Server) sitesAtAddress(ctx context.Context, origin, typedPath, identity string) ([]signInSite, error) {
	all, err := s.deps.Sites.ListSites(ctx)
	if err != nil {
		return nil, err
	}
	var (
		out   []signInSite
		depth = -1
	)
	for _, site := range all {
		if site.Status != sites.StatusActive {
			continue
		}
		dir, ok := siteDirectory(site.BaseURL, origin)
		if !ok || !underDirectory(typedPath, dir) || len(dir) < depth {
			continue
		}
		if identity != "" && !strings.EqualFold(site.IdentityKey, identity) {
			continue
		}
		ss, err := s.signInSiteOf(ctx, site)
		if errors.Is(err, errNoSignIn) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(dir) > depth {
			out, depth = out[:0], len(dir)
		}
		out = append(out, ss)
	}
	return out, nil
}

// siteDirectory returns the path of baseURL's virtual directory ("" for
// none) when baseURL is at origin.
func siteDirectory(baseURL, origin string) (string, bool) {
	if !strings.HasPrefix(baseURL, origin) {
		return "", false
	}
	dir := baseURL[len(origin):]
	return dir, dir == "" || dir[0] == '/'
}

// underDirectory reports whether path is dir or below it.
func underDirectory(path, dir string) bool {
	if dir == "" {
		return true
	}
	if len(path) < len(dir) || !strings.EqualFold(path[:len(dir)], dir) {
		return false
	}
	return len(path) == len(dir) || path[len(dir)] == '/'
}

// checkForm checks what every sign-in form post must carry: a browser
// binding, a same-origin Origin (when the browser sends one), the flow id
// and a CSRF token made for both. It answers the request itself when a
// check fails.
func (s *Server) checkForm(w http.ResponseWriter, r *http.Request) (flowID, browser string, ok bool) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.renderMessage(w, http.StatusBadRequest, messagePage{Title: "Invalid request", Message: "The form could not be read."})
		return "", "", false
	}
	if !s.sameOriginPost(r) {
		s.renderMessage(w, http.StatusForbidden, messagePage{Title: "Request refused", Message: "This form was sent from another site."})
		return "", "", false
	}
	browser, ok = s.browserID(r)
	if !ok {
		s.flowError(w, storage.ErrFlowWrongBrowser)
		return "", "", false
	}
	flowID = r.PostForm.Get("flow")
	if !checkCSRF(browser, flowID, r.PostForm.Get("csrf")) {
		s.renderMessage(w, http.StatusForbidden, messagePage{
			Title:   "Request refused",
			Message: "The form's security token does not match this browser (CSRF check failed).",
			Next:    "Go back to your AI client and connect again.",
		})
		return "", "", false
	}
	return flowID, browser, true
}

// flowError explains a sign-in that cannot continue.
func (s *Server) flowError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, storage.ErrFlowExpired):
		s.renderMessage(w, http.StatusBadRequest, messagePage{Title: "This sign-in has expired",
			Message: "Sign-in must be finished within a few minutes of starting it.", Next: "Go back to your AI client and connect again."})
	case errors.Is(err, storage.ErrFlowUsed), errors.Is(err, storage.ErrFlowUnknown):
		s.renderMessage(w, http.StatusBadRequest, messagePage{Title: "This sign-in link cannot be used again",
			Message: "Each step of a sign-in works once.", Next: "Go back to your AI client and connect again."})
	case errors.Is(err, storage.ErrFlowBurned):
		s.flowBurnedPage(w)
	case errors.Is(err, storage.ErrFlowWrongBrowser):
		s.renderMessage(w, http.StatusBadRequest, messagePage{Title: "Sign-in started in another browser",
			Message: "Finish signing in in the browser where you started, with cookies enabled.", Next: "Go back to your AI client and connect again."})
	default:
		s.pageError(w, "sign-in flow", err)
	}
}
