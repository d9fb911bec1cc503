package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// preflightSummary is the sites page's word on a site's last preflight.
func (c *Console) preflightSummary(r *http.Request, site sites.Site) (preflightOutcome, error) {
	p, err := c.deps.Admin.LastPreflight(r.Context(), site)
	var ae *siteadmin.Error
	if errors.As(err, &ae) && ae.Kind == siteadmin.NotFound {
		return preflightOutcome{Outcome: "not run yet"}, nil
	}
	if err != nil {
		return preflightOutcome{}, err
	}
	at := p.RanAt.UTC()
	out := preflightOutcome{Outcome: "passed", Day: at.Format("2006-01-02"), Time: at.Format("15:04 UTC")}
	if !p.Passed {
		failed := 0
		for _, ch := range p.Checks {
			if ch.Status == connector.CheckFail {
				failed++
			}
		}
		out.Outcome = fmt.Sprintf("failed %d of %d checks", failed, len(p.Checks))
	}
	return out, nil
}

// preflightOutcome is a site's last preflight as the sites page says it:
// "failed 1 of 9 checks, 2026-12-07 15:04 UTC", the day and the time each
// kept on one line.
type preflightOutcome struct {
	Outcome, Day, Time string
}

// preflightView is the preflight page's data.
type preflightView struct {
	Site    string
	Display string
	Ran     string
	Passed  bool
	Checks  []connector.PreflightCheck
	// Failed and Skipped count the checks that failed and those not
	// checked, for the verdict.
	Failed, Skipped int
}

func (c *Console) preflightPage(w http.ResponseWriter, r *http.Request) {
	site, ok := c.siteOfQuery(w, r, r.URL.Query().Get("site"))
	if !ok {
		return
	}
	v := preflightView{Site: site.Slug, Display: site.DisplayName}
	p, err := c.deps.Admin.LastPreflight(r.Context(), site)
	var ae *siteadmin.Error
	switch {
	case errors.As(err, &ae) && ae.Kind == siteadmin.NotFound:
	case err != nil:
		c.log.Error("read a preflight for the console", zap.Error(err))
		c.unavailable(w)
		return
	default:
		v.Ran, v.Passed, v.Checks = p.RanAt.UTC().Format("2006-01-02 15:04:05 UTC"), p.Passed, p.Checks
		for i, ch := range p.Checks {
			found := ch.Found
			if ch.Status == connector.CheckSkip {
				// The result column says "not checked" already.
				found = strings.TrimPrefix(found, "not checked: ")
			}
			v.Checks[i].Found, v.Checks[i].Fix = sentence(found), sentence(ch.Fix)
			switch ch.Status {
			case connector.CheckFail:
				v.Failed++
			case connector.CheckSkip:
				v.Skipped++
			}
		}
	}
	flash := ""
	if q := r.URL.Query(); q.Get("done") == "ran" && noticeChecked(r, q) {
		flash = "The preflight of " + site.Slug + " ran; its result is below."
	}
	c.Render(w, r, http.StatusOK, c.pages.preflight, flash, v)
}

// runPreflight runs a site's preflight on the operator's demand, through
// siteadmin (stored, audited), and shows the result.
func (c *Console) runPreflight(w http.ResponseWriter, r *http.Request) {
	site, ok := c.siteOfQuery(w, r, r.PostFormValue("site"))
	if !ok {
		return
	}
	if _, err := c.deps.Admin.RunPreflight(r.Context(), Actor(r), site); err != nil {
		c.log.Error("console preflight", zap.Error(err))
		c.unavailable(w)
		return
	}
	http.Redirect(w, r, c.kit.URL("/console/preflight?"+noticeQuery(r, url.Values{"site": {site.Slug}, "done": {"ran"}})), http.StatusSeeOther)
}

// siteOfQuery loads the site slug names, answering the page itself when
// there is none.
func (c *Console) siteOfQuery(w http.ResponseWriter, r *http.Request, slug string) (sites.Site, bool) {
	site, err := c.deps.Store.GetSiteBySlug(r.Context(), slug)
	if errors.Is(err, sites.ErrNotFound) || (err != nil && sites.ValidateSlug(slug) != nil) {
		c.renderError(w, http.StatusNotFound, pagekit.ErrorPage{Title: "There is no such site", Message: "No site has this short name.", Next: "Choose a site from the console's sites page."})
		return sites.Site{}, false
	}
	if err != nil {
		c.log.Error("read a site for the console", zap.Error(err))
		c.unavailable(w)
		return sites.Site{}, false
	}
	return site, true
}

// oldLibraryWords is what a tls check stored before it said findings in
// words only: the failed operation of Go's net package ("(dial failed)").
var oldLibraryWords = regexp.MustCompile(`\s*\((dial|read|write) failed\)`)

// sentence is a check's finding or fix as the page shows it: a sentence
// starting with a capital and ending with a full stop. The checks (and the
// admin API) say them as fragments ("the host name … does not resolve");
// a fragment starting with a name keeps it as written (erpgate, a host).
func sentence(s string) string {
	s = strings.TrimSpace(oldLibraryWords.ReplaceAllString(s, ""))
	if s == "" {
		return s
	}
	first, _, _ := strings.Cut(s, " ")
	first = strings.TrimRight(first, ":;,")
	if r, n := utf8.DecodeRuneInString(s); unicode.IsLower(r) && first != "erpgate" && !strings.ContainsAny(first, ".:/@") {
		s = string(unicode.ToUpper(r)) + s[n:]
	}
	if !strings.ContainsAny(s[len(s)-1:], ".!?") && !strings.HasSuffix(s, "…") {
		s += "."
	}
	return s
}
