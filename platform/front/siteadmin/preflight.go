package siteadmin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/netguard"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// Preflight (issue 17) checks that a site can work, one check at a time,
// each with pass, fail or skip, what it found and how to fix a failure:
//
//	dns             the host name resolves (and, in production, to addresses
//	                erpgate may reach)
//	tls             the ERP answers over HTTPS with a trusted certificate
//	api_credential  the stored API credential still works
//	oauth_client    the site has an OAuth client for user sign-in
//	<kind>.*        the connector's own checks (connector.Preflighter):
//	                the OAuth endpoints and redirect URI, Acumatica's
//	                endpoint version and canary inquiry, Frappe's version
//	                and OAuth client settings
//
// RunPreflight runs them and stores the result (site_preflight, one row
// per site); LastPreflight reads it back. The registration flow runs it
// when a site is registered and the console on the operator's demand.

// Preflight is a site's preflight result.
type Preflight struct {
	RanAt time.Time
	// Passed: no check failed (skipped ones do not count).
	Passed bool
	Checks []connector.PreflightCheck
}

// ActionRunPreflight names the audit event of a preflight run.
const ActionRunPreflight = "run_preflight"

// PreflightTimeout bounds a whole preflight; each check has CheckTimeout.
const (
	PreflightTimeout = 90 * time.Second
	CheckTimeout     = 20 * time.Second
)

// certificateWarning is how close to its expiry a certificate is reported.
const certificateWarning = 14 * 24 * time.Hour

// RunPreflight runs every check against site, stores the result as the
// site's last preflight and records an audit event naming actor. It fails
// only when the result cannot be stored (or the site is unknown to its
// connector); failed checks are a result, not an error.
func (s *Service) RunPreflight(ctx context.Context, actor Actor, site sites.Site) (Preflight, error) {
	p, err := s.runPreflight(ctx, site)
	details := map[string]any{}
	if err == nil {
		details["passed"] = p.Passed
		var failed []string
		for _, c := range p.Checks {
			if c.Status == connector.CheckFail {
				failed = append(failed, c.ID)
			}
		}
		if len(failed) > 0 {
			details["failed"] = failed
		}
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionRunPreflight, details, err)
	return p, err
}

// StartPreflight runs RunPreflight in the background, detached from the
// caller's request (a preflight takes up to PreflightTimeout): for the
// registration flow, which answers the person at once and shows the result
// when it is stored. A failure to store it is logged.
func (s *Service) StartPreflight(ctx context.Context, actor Actor, site sites.Site) {
	ctx = context.WithoutCancel(ctx)
	go func() {
		if _, err := s.RunPreflight(ctx, actor, site); err != nil {
			s.log.Warn("preflight not stored", zap.String("site_slug", site.Slug), zap.Error(err))
		}
	}()
}

func (s *Service) runPreflight(ctx context.Context, site sites.Site) (Preflight, error) {
	conn, err := s.connectorOf(site)
	if err != nil {
		return Preflight{}, err
	}
	csite, err := site.Connector()
	if err != nil {
		return Preflight{}, internal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	checks := s.preflightChecks(ctx, site, csite, conn)
	p := Preflight{RanAt: time.Now().UTC().Truncate(time.Microsecond), Passed: true, Checks: checks}
	for _, c := range checks {
		if c.Status == connector.CheckFail {
			p.Passed = false
		}
	}
	raw, err := json.Marshal(checks)
	if err != nil {
		return Preflight{}, internal(err)
	}
	// The result is kept even when the caller has gone: it was paid for.
	err = s.deps.Store.PutPreflight(context.WithoutCancel(ctx), sites.Preflight{SiteID: site.ID, RanAt: p.RanAt, Passed: p.Passed, Checks: raw})
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return Preflight{}, newError(NotFound, err, "site %s was deleted while its preflight ran", toolerr.Quote(site.Slug))
	case err != nil:
		return Preflight{}, storeError(err)
	}
	return p, nil
}

// LastPreflight returns the site's last preflight; an error of kind
// NotFound when it has never run.
func (s *Service) LastPreflight(ctx context.Context, site sites.Site) (Preflight, error) {
	stored, err := s.deps.Store.GetPreflight(ctx, site.ID)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return Preflight{}, newError(NotFound, err, "site %s has no preflight yet; run one", toolerr.Quote(site.Slug))
	case err != nil:
		return Preflight{}, storeError(err)
	}
	p := Preflight{RanAt: stored.RanAt, Passed: stored.Passed}
	if err := json.Unmarshal(stored.Checks, &p.Checks); err != nil {
		return Preflight{}, internal(fmt.Errorf("siteadmin: preflight of %s: %w", site.Slug, err))
	}
	return p, nil
}

// preflightChecks runs the checks in order; when the ERP cannot be reached
// the checks that need it are skipped.
func (s *Service) preflightChecks(ctx context.Context, site sites.Site, csite connector.Site, conn connector.Connector) []connector.PreflightCheck {
	dns := s.checkDNS(ctx, csite)
	checks := []connector.PreflightCheck{dns}
	reach := connector.Skip("tls", "The ERP is reachable, over TLS for https", "not checked: the host name does not resolve to an address erpgate may reach")
	if dns.Status == connector.CheckPass {
		reach = s.checkReachable(ctx, csite)
	}
	checks = append(checks, reach)
	unreachable := reach.Status != connector.CheckPass
	const why = "not checked: the ERP cannot be reached (see the checks above)"

	api, apiCheck := s.preflightAPIClient(ctx, site, csite, conn, unreachable)
	checks = append(checks, apiCheck)

	in := connector.PreflightInput{API: api}
	if s.deps.PublicURL != nil {
		in.RedirectURI = s.deps.PublicURL(site.CallbackPath())
		if !site.SharedCallback {
			in.SharedRedirectURI = s.deps.PublicURL(sites.SharedCallbackPath)
		}
	}
	in.HTTP = s.deps.HTTPClient(csite, nil)
	if _, ok := conn.(connector.UpstreamOAuth); ok {
		_, fields, err := s.deps.Store.GetConnection(ctx, site.ID, sites.ConnectionOAuth)
		switch {
		case errors.Is(err, sites.ErrNotFound):
			checks = append(checks, connector.Skip("oauth_client", "The site has an OAuth client for user sign-in",
				"the site has no OAuth client: people cannot sign in through /sites/"+site.Slug+"/mcp; only service tokens work"))
		case err != nil:
			checks = append(checks, connector.Fail("oauth_client", "The site has an OAuth client for user sign-in",
				"the stored OAuth client could not be read", "put the site's OAuth client again (PUT /api/v1/sites/"+site.Slug+"/connections/oauth)"))
		default:
			in.OAuthClient = &connector.OAuthClient{ID: fields["client_id"].Reveal(), Secret: fields["client_secret"]}
			checks = append(checks, connector.Pass("oauth_client", "The site has an OAuth client for user sign-in",
				"OAuth client "+in.OAuthClient.ID+"; its redirect URI must be "+in.RedirectURI))
		}
	}
	pf, ok := conn.(connector.Preflighter)
	if !ok {
		return checks
	}
	if unreachable {
		return append(checks, connector.Skip(site.Kind, "The "+KindName(site.Kind)+" checks", why))
	}
	cctx, cancel := context.WithTimeout(ctx, 3*CheckTimeout)
	defer cancel()
	return append(checks, pf.Preflight(cctx, csite, in)...)
}

// checkDNS resolves the base URL's host, and in production checks it
// against the ERP address policy.
func (s *Service) checkDNS(ctx context.Context, site connector.Site) connector.PreflightCheck {
	const id, title = "dns", "The host name resolves"
	host := site.BaseURL.Hostname()
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	if s.deps.ERPAddresses != nil {
		err := s.deps.ERPAddresses.CheckHost(ctx, nil, netguard.URLHostPort(site.BaseURL))
		switch {
		case errors.Is(err, netguard.ErrUnresolved):
			return connector.Fail(id, title, "the host name "+host+" does not resolve",
				"check the site's base URL, and that the ERP's name is in the DNS erpgate uses")
		case errors.Is(err, netguard.ErrForbiddenAddress):
			return connector.Fail(id, title, err.Error(),
				"list "+netguard.Listing(site.BaseURL)+" in ERPGATE_ERP_PRIVATE_HOSTS if the ERP is on your own network ("+PrivateHostsHint+")")
		case err != nil:
			return connector.Fail(id, title, "the host name "+host+" could not be checked", "try again; if it persists, check erpgate's DNS")
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return connector.Pass(id, title, "the base URL names the address "+a.String())
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil || len(addrs) == 0 {
		return connector.Fail(id, title, "the host name "+host+" does not resolve",
			"check the site's base URL, and that the ERP's name is in the DNS erpgate uses")
	}
	if len(addrs) > 4 {
		addrs = append(addrs[:4], "…")
	}
	return connector.Pass(id, title, "the host name "+host+" resolves to "+strings.Join(addrs, ", "))
}

// checkReachable asks the site's base URL for anything: an HTTP answer of
// any status proves the address, the port and (over https) TLS.
func (s *Service) checkReachable(ctx context.Context, site connector.Site) connector.PreflightCheck {
	const id, title = "tls", "The ERP is reachable, over TLS for https"
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	hc := *s.deps.HTTPClient(site, nil)
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/", nil), nil)
	if err != nil {
		return connector.Fail(id, title, "the base URL is not a valid URL", "correct the site's base URL")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return unreachableCheck(id, title, site, err)
	}
	_ = resp.Body.Close()
	if resp.TLS == nil {
		return connector.Pass(id, title, fmt.Sprintf("the ERP at %s answered HTTP %d over plain http, which erpgate allows for development hosts only", site.BaseURL.Host, resp.StatusCode))
	}
	found := fmt.Sprintf("the ERP at %s answered HTTP %d over %s", site.BaseURL.Host, resp.StatusCode, tls.VersionName(resp.TLS.Version))
	if len(resp.TLS.PeerCertificates) > 0 {
		cert := resp.TLS.PeerCertificates[0]
		found += fmt.Sprintf("; its certificate is valid until %s", cert.NotAfter.UTC().Format("2006-01-02"))
		if time.Until(cert.NotAfter) < certificateWarning {
			found += ", in less than two weeks: renew it"
		}
	}
	return connector.Pass(id, title, found)
}

// unreachableCheck says why the ERP could not be reached, and what to do.
func unreachableCheck(id, title string, site connector.Site, err error) connector.PreflightCheck {
	host := site.BaseURL.Host
	var (
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		invalid    x509.CertificateInvalidError
		recordErr  tls.RecordHeaderError
		forbidden  *netguard.ForbiddenError
		opErr      *net.OpError
		verifyErr  *tls.CertificateVerificationError
		netTimeout net.Error
	)
	switch {
	case errors.As(err, &forbidden):
		return connector.Fail(id, title, "erpgate does not connect to "+host+": "+forbidden.Error(),
			"list the host (host:port for a port other than 443) in ERPGATE_ERP_PRIVATE_HOSTS if the ERP is on your own network")
	case errors.As(err, &unknownCA) || errors.As(err, &verifyErr) && errors.As(verifyErr.Err, &unknownCA):
		return connector.Fail(id, title, "the TLS certificate of "+host+" is not signed by an authority erpgate trusts",
			"install a certificate from a public certificate authority on the ERP, with its intermediate certificates, or add your own authority to the trust store of erpgate's machine")
	case errors.As(err, &hostname):
		return connector.Fail(id, title, "the TLS certificate of "+host+" "+certificateNames(hostname.Certificate)+", not for "+hostname.Host,
			"install a certificate for "+site.BaseURL.Hostname()+", or correct the site's base URL to the name the certificate has")
	case errors.As(err, &invalid):
		return connector.Fail(id, title, "the TLS certificate of "+host+" "+certificateProblem(invalid),
			"renew the ERP's certificate (an expired or not yet valid certificate is refused)")
	case errors.As(err, &recordErr):
		return connector.Fail(id, title, "the ERP at "+host+" does not speak TLS on that port",
			"use http:// only for a development host, or correct the port of the base URL")
	case errors.As(err, &netTimeout) && netTimeout.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return connector.Fail(id, title, "the ERP at "+host+" did not answer within "+CheckTimeout.String(),
			"check that the ERP runs and that a firewall lets erpgate's address reach "+host)
	case errors.As(err, &opErr):
		// The operation that failed (dial, read) is the library's word,
		// which an operator cannot act on; the fix says what to check.
		return connector.Fail(id, title, "nothing answered at "+host,
			"check that the ERP runs, the port of the base URL, and that a firewall lets erpgate's address reach it")
	}
	return connector.Fail(id, title, "the ERP at "+host+" could not be reached", "check the base URL and that the ERP runs")
}

// certificateRefusal says in words why crypto/x509 refused the ERP's
// certificate ("is not signed by ..."), when that is why err happened.
func certificateRefusal(err error) (string, bool) {
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &unknownCA):
		return "is not signed by an authority erpgate's machine trusts", true
	case errors.As(err, &hostname):
		return certificateNames(hostname.Certificate) + ", not for " + hostname.Host, true
	case errors.As(err, &invalid):
		return certificateProblem(invalid), true
	}
	return "", false
}

// certificateNames says which names cert is for, in the words of the tls
// check ("is for erp.example.com, 10.0.0.5"); crypto/x509's own message
// names SANs and is not a sentence for an operator.
func certificateNames(cert *x509.Certificate) string {
	var names []string
	if cert != nil {
		names = append(names, cert.DNSNames...)
		for _, ip := range cert.IPAddresses {
			names = append(names, ip.String())
		}
	}
	switch {
	case len(names) == 0:
		return "names no host (it has no subject alternative names)"
	case len(names) > 4:
		names = append(names[:4], "…")
	}
	return "is for " + strings.Join(names, ", ")
}

// certificateProblem says why crypto/x509 refused a certificate, in the
// words of the tls check.
func certificateProblem(e x509.CertificateInvalidError) string {
	cert := e.Cert
	switch {
	case e.Reason == x509.Expired && cert != nil && time.Now().Before(cert.NotBefore):
		return "is not valid before " + cert.NotBefore.UTC().Format("2006-01-02 15:04") + " UTC"
	case e.Reason == x509.Expired && cert != nil:
		return "expired on " + cert.NotAfter.UTC().Format("2006-01-02 15:04") + " UTC"
	case e.Reason == x509.Expired:
		return "has expired or is not valid yet"
	case e.Reason == x509.IncompatibleUsage:
		return "is not for a web server (its extended key usage)"
	}
	return "is refused by erpgate's machine for a reason other than its names or dates"
}

// preflightAPIClient checks the stored API credential and returns a client
// authorised with it, when it works.
func (s *Service) preflightAPIClient(ctx context.Context, site sites.Site, csite connector.Site, conn connector.Connector, unreachable bool) (*http.Client, connector.PreflightCheck) {
	const id, title = "api_credential", "The API credential works"
	stored, fields, err := s.deps.Store.GetConnection(ctx, site.ID, sites.ConnectionAPIToken)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return nil, connector.Skip(id, title, "the site has no API credential: service tokens cannot be issued for it")
	case errors.Is(err, sites.ErrCredentialUnreadable):
		return nil, connector.Fail(id, title, "the stored credential cannot be decrypted (its key is no longer in ERPGATE_ENCRYPTION_KEYS)",
			"put the API credential again (PUT /api/v1/sites/"+site.Slug+"/connections/api_token), or restore the key")
	case err != nil:
		return nil, connector.Fail(id, title, "the stored credential could not be read", "try again")
	}
	if unreachable {
		return nil, connector.Skip(id, title, "not checked: the ERP cannot be reached (see the checks above)")
	}
	auth, err := conn.APIAuthorizer(csite, fields)
	if err != nil {
		return nil, connector.Fail(id, title, "the stored credential is not complete",
			"put the API credential again (PUT /api/v1/sites/"+site.Slug+"/connections/api_token)")
	}
	hc := s.deps.HTTPClient(csite, auth)
	vctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	identity, err := conn.VerifyAPICredential(vctx, csite, hc)
	if err != nil {
		e := asError(verificationError(site, err))
		found := strings.TrimSuffix(strings.TrimPrefix(e.Message, "could not verify the credential: "), "; nothing was saved")
		fix := "put a working API credential (PUT /api/v1/sites/" + site.Slug + "/connections/api_token); check that its ERP user is enabled and has not changed its password or keys"
		if e.Kind == Unreachable {
			fix = "check that the ERP runs and answers; then run the preflight again"
		}
		return nil, connector.Fail(id, title, found, fix)
	}
	found := "the ERP accepts it as " + identity
	if stored.VerifiedIdentity != "" && stored.VerifiedIdentity != identity {
		found += " (it was saved as " + stored.VerifiedIdentity + ")"
	}
	return hc, connector.Pass(id, title, found)
}
