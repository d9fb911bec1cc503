package authserver

import (
	"embed"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/web/pagekit"
)

// The sign-in pages are pagekit pages: one layout, one policy, one error
// page. Their markup is in templates/.
//
//go:embed templates/*.html
var pageFiles embed.FS

// signInPages are the parsed pages of the sign-in.
type signInPages struct {
	consent, chooseSite *pagekit.Page
}

func parseSignInPages(kit *pagekit.Kit) (signInPages, error) {
	var p signInPages
	var err error
	if p.consent, err = kit.Parse(pageFiles, "templates/consent.html"); err != nil {
		return p, fmt.Errorf("authserver: %w", err)
	}
	if p.chooseSite, err = kit.Parse(pageFiles, "templates/choose_site.html"); err != nil {
		return p, fmt.Errorf("authserver: %w", err)
	}
	return p, nil
}

// renderPage writes a sign-in page. formAction lists where its forms may
// go, redirects included (CSP applies form-action to the redirect that
// answers a form post).
func (s *Server) renderPage(w http.ResponseWriter, status int, page *pagekit.Page, formAction []string, data any) {
	s.render(w, status, page, pagekit.Options{FormAction: formAction}, data)
}

func (s *Server) render(w http.ResponseWriter, status int, page *pagekit.Page, opts pagekit.Options, data any) {
	if err := s.kit.Render(w, status, page, data, opts); err != nil {
		s.log.Warn("render sign-in page", zap.Error(err))
	}
}

// messagePage is an error or information page: a plain sentence, the
// likely causes of a set-up problem, and what to do next. Never a
// library's or an OAuth error's text.
type messagePage = pagekit.ErrorPage

func (s *Server) renderMessage(w http.ResponseWriter, status int, p messagePage) {
	if err := s.kit.RenderError(w, status, p); err != nil {
		s.log.Warn("render sign-in message page", zap.Error(err))
	}
}

// consentPage is the data of the consent page.
type consentPage struct {
	FlowID, CSRF  string
	ClientName    string
	RedirectHost  string
	SiteName      string
	UserName      string
	ConsentAction string
}

// chooseSitePage is the data of the /mcp page where the user types their
// ERP's address.
type chooseSitePage struct {
	FlowID, CSRF string
	ERPURL       string
	Tenant       string
	AskTenant    bool
	Error        string
	Action       string
}
