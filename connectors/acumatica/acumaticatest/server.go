package acumaticatest

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a simulator. The zero value gives the seeded demo
// company, no latency, 10 API-user seats and no concurrency limit.
type Options struct {
	// Latency is added to every response.
	Latency time.Duration
	// TokenLifetime is the OAuth access-token lifetime (default 3600 s).
	TokenLifetime time.Duration
	// SeatLimit is the licence's "Maximum Number of Web Services API
	// Users": distinct users holding a live token (plus open cookie or
	// concurrent-access sessions). Default 10.
	SeatLimit int
	// ConcurrencyLimit is the number of API requests served at once;
	// requests beyond it are declined with 429. 0 = unlimited.
	ConcurrencyLimit int
	// Now is the clock. The default is fixed at 2026-06-15T10:00:00Z so
	// the data is deterministic; the data is generated from Now() once.
	Now func() time.Time
	// Tenant is the tenant login name (default "Demo").
	Tenant string
	// InvalidCredentials500 makes the identity server refuse credentials
	// as the 25.200.001 instances of issue 15 did: a password grant with a
	// wrong password, and a refresh grant of a user whose password changed,
	// are answered HTTP 500 with PXLogin's PXException body ("Error: Invalid
	// credentials. Please try again."), the body of a refused cookie login,
	// instead of 400 invalid_grant.
	InvalidCredentials500 bool
	// PathPrefix mounts the instance under a virtual directory, as an
	// on-premises install usually is ("/AcumaticaERP": the instance URL is
	// https://host/AcumaticaERP). Every request outside it gets IIS's 404
	// and every link the simulator writes carries it. "" is the web root.
	PathPrefix string
	// ClientAdded, when set, is called with each Connected Application
	// registered after start-up (RegisterClient, AddClient or the
	// SM303010 page), so that a development set-up can keep them across
	// restarts (AddClient with the same ID and Secret).
	ClientAdded func(Client)
	// SetupNotEntered names a form whose required configuration data the
	// tenant lacks, as on a new tenant nobody finished setting up
	// ("Company Branches"): every contract-API request for an entity the
	// user may open is then answered HTTP 500 with
	// PX.Data.PXSetupNotEnteredException "The required configuration data
	// is not entered on the <form> form." (shared/erp-api/acumatica/
	// api-facts.md §3.2, [KC]). It lasts until an administrator enters the
	// data: repeating the request never helps.
	SetupNotEntered string
	// ArchivedBefore archives every top-level record whose Date is
	// before it, as an archival policy does with old documents: GET lists
	// leave archived records out, and a GET by key or id answers 500 "No
	// entity satisfies the condition.", unless the request carries the
	// header PX-ApiArchive: SHOW (shared/erp-api/acumatica/api-facts.md
	// §1.2; Acumatica's Postman example "Operate with Archived Records").
	// The zero time archives nothing.
	ArchivedBefore time.Time
	// FieldErrorsOnly answers a PUT that fails validation (422) with the
	// entity carrying an "error" only on the fields and detail lines it
	// refused, without the record-level "error" ("Inserting 'X' record
	// raised at least one error."): Acumatica's documentation shows a
	// refused field alone (shared/erp-api/acumatica/api-facts.md §3.2,
	// [DOC Create_Record]), and no recording says every version adds the
	// record-level one. Nothing is saved either way.
	FieldErrorsOnly bool
}

// DefaultNow is the default fixed clock value.
var DefaultNow = time.Date(2026, time.June, 15, 10, 0, 0, 0, time.UTC)

// Simulator is Acumatica's HTTP surface as an http.Handler: contract
// REST, GI OData and the identity server. It is safe for concurrent use.
type Simulator struct {
	opts          Options
	now           func() time.Time
	tenant        string
	prefix        string
	outside       atomic.Int64
	tokenLifetime time.Duration
	seatLimit     int
	data          *Dataset
	usersMu       sync.RWMutex
	users         []*User
	tokens        *tokenStore
	inflight      atomic.Int64
	closed        chan struct{}
	closeOnce     sync.Once

	mu      sync.Mutex
	clients []Client
	pending map[string]*pendingAuthorization
	codes   map[string]*authCode
	faults  []*faultState
	hits    map[string]int
	// inquiryAccess overrides the roles' inquiry rights per user, as an
	// administrator editing a user's access rights at run time would:
	// lower-case user name → inquiry name → allowed.
	inquiryAccess map[string]map[string]bool
	// viewOnly lowers a user's rights on forms to View Only (SetViewOnly):
	// user (lower case) → screen id.
	viewOnly map[string]map[string]bool
	// noAccess withdraws a user's rights on forms (SetNoAccess): user
	// (lower case) → screen id.
	noAccess map[string]map[string]bool
	// uiSessions are the browser sessions of the administrator's pages
	// (connected_apps.go).
	uiSessions map[string]*User
	// longOps are the long operations running, by id (longop.go).
	longOps   map[string]*longOperation
	longOpSeq int
}

// NewHandler builds a simulator to mount on any server.
func NewHandler(opts Options) *Simulator {
	s := &Simulator{opts: opts, now: opts.Now, tenant: opts.Tenant, prefix: strings.TrimRight(opts.PathPrefix, "/"), tokenLifetime: opts.TokenLifetime,
		seatLimit: opts.SeatLimit, users: userPointers(demoUsers()), tokens: newTokenStore(), closed: make(chan struct{}),
		pending: map[string]*pendingAuthorization{}, codes: map[string]*authCode{}, hits: map[string]int{}}
	if s.now == nil {
		s.now = func() time.Time { return DefaultNow }
	}
	if s.tenant == "" {
		s.tenant = "Demo"
	}
	if s.tokenLifetime <= 0 {
		s.tokenLifetime = time.Hour
	}
	if s.seatLimit <= 0 {
		s.seatLimit = 10
	}
	s.clients = defaultClients(s.tenant)
	s.data = buildDataset(s.now())
	return s
}

// Data returns the seeded data so tests can compute expected values.
func (s *Simulator) Data() *Dataset { return s.data }

// Tenant returns the tenant login name.
func (s *Simulator) Tenant() string { return s.tenant }

// RequestCount returns how many requests so far had a URL path starting
// with pathPrefix ("" counts all), including faulted ones.
func (s *Simulator) RequestCount(pathPrefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for p, c := range s.hits {
		if strings.HasPrefix(p, pathPrefix) {
			n += c
		}
	}
	return n
}

// PathPrefix returns the virtual directory the instance is mounted under
// ("" for the web root).
func (s *Simulator) PathPrefix() string { return s.prefix }

// OutsideRequests returns how many requests so far were for a path outside
// the virtual directory (each answered 404).
func (s *Simulator) OutsideRequests() int { return int(s.outside.Load()) }

// ServeHTTP counts the request, refuses it when it is outside the virtual
// directory, applies the licence's concurrency limit, faults (a hanging
// request holds its processing slot) and latency, then dispatches. Paths
// seen by faults and routes are relative to the virtual directory.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	if hiddenByIIS(r.URL.Path) {
		writeIISNotFound(w)
		return
	}
	if s.prefix != "" {
		rest, ok := underPrefix(r.URL.Path, s.prefix)
		if !ok {
			s.outside.Add(1)
			writeIISNotFound(w)
			return
		}
		r2 := r.Clone(context.WithValue(r.Context(), prefixKey{}, s.prefix))
		r2.URL.Path, r2.URL.RawPath = rest, ""
		r = r2
	}
	if isAPIPath(r.URL.Path) && !strings.HasSuffix(r.URL.Path, "/auth/logout") {
		n := s.inflight.Add(1)
		if s.opts.ConcurrencyLimit > 0 && int(n) > s.opts.ConcurrencyLimit {
			// Declined at once; declined requests hold no processing slot.
			s.inflight.Add(-1)
			writeThrottled(w)
			return
		}
		defer s.inflight.Add(-1)
	}
	if f := s.takeFault(r.URL.Path); f != nil {
		if f.AfterServing {
			s.route(discard{header: http.Header{}}, r)
		}
		if s.applyFault(f, w, r) {
			return
		}
	}
	if s.opts.Latency > 0 && !s.sleep(r, s.opts.Latency) {
		return
	}
	s.route(w, r)
}

// underPrefix returns the part of path below the virtual directory prefix,
// compared without regard to case as IIS does.
func underPrefix(path, prefix string) (string, bool) {
	if len(path) < len(prefix) || !strings.EqualFold(path[:len(prefix)], prefix) {
		return "", false
	}
	rest := path[len(prefix):]
	switch {
	case rest == "":
		return "/", true
	case rest[0] == '/':
		return rest, true
	}
	return "", false
}

// prefixKey carries the virtual directory in a request's context, for the
// links the handlers write.
type prefixKey struct{}

// pathPrefix returns the virtual directory r was served under.
func pathPrefix(r *http.Request) string {
	p, _ := r.Context().Value(prefixKey{}).(string)
	return p
}

func isAPIPath(p string) bool {
	lp := strings.ToLower(p)
	return strings.HasPrefix(lp, "/entity") || strings.HasPrefix(lp, "/t/")
}

// sleep waits d unless the request or the simulator ends first.
func (s *Simulator) sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.closed:
		return false
	}
}

// route dispatches on the path. Fixed segments are case-insensitive, as
// on IIS.
func (s *Simulator) route(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	lp := strings.ToLower(path)
	switch lp {
	case "/.well-known/openid-configuration", "/identity/.well-known/openid-configuration":
		s.handleDiscovery(w, r)
		return
	case "/identity/.well-known/openid-configuration/jwks":
		s.handleJWKS(w, r)
		return
	case "/identity/connect/authorize":
		s.handleAuthorize(w, r)
		return
	case pathLogin:
		s.handleLogin(w, r)
		return
	case pathConsent:
		s.handleConsent(w, r)
		return
	case "/identity/connect/token":
		s.handleToken(w, r)
		return
	case "/identity/connect/userinfo":
		s.handleUserInfo(w, r)
		return
	case "/identity/connect/revocation":
		s.handleRevocation(w, r)
		return
	case "/entity", "/entity/":
		s.handleEntityRoot(w, r)
		return
	case "/entity/auth/login":
		s.handleCookieLogin(w, r)
		return
	case "/entity/auth/logout":
		s.handleLogout(w, r)
		return
	case strings.ToLower(PathUILogin):
		s.handleUILogin(w, r)
		return
	case strings.ToLower(PathMain):
		s.handleMain(w, r)
		return
	case strings.ToLower(PathErrorPage):
		writeFramesError(w, r)
		return
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case len(segs) >= 3 && strings.EqualFold(segs[0], "entity"):
		s.handleContract(w, r, segs[1], segs[2], segs[3:])
	case len(segs) >= 5 && segs[0] == "t" && strings.EqualFold(segs[2], "api") &&
		strings.EqualFold(segs[3], "odata") && strings.EqualFold(segs[4], "gi"):
		rest := strings.Join(segs[5:], "/")
		if rest != "" {
			rest = "/" + rest
		}
		s.handleGI(w, r, segs[1], rest)
	default:
		writeNotFound(w, r)
	}
}

// Close releases requests held by Hang faults or latency.
func (s *Simulator) Close() { s.closeOnce.Do(func() { close(s.closed) }) }

// Server is a simulator listening on a loopback port, like
// httptest.Server.
type Server struct {
	*Simulator
	// URL is the instance URL: "http://127.0.0.1:port" followed by
	// Options.PathPrefix.
	URL string
	// Origin is "http://127.0.0.1:port".
	Origin string
	srv    *http.Server
	ln     net.Listener
}

// NewServer starts a simulator on 127.0.0.1 with a random free port.
func NewServer(opts Options) *Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("acumaticatest: listen: " + err.Error())
	}
	sim := NewHandler(opts)
	origin := "http://" + ln.Addr().String()
	s := &Server{Simulator: sim, URL: origin + sim.prefix, Origin: origin, ln: ln,
		srv: &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

// Close stops the server, releases hanging requests and closes all
// connections.
func (s *Server) Close() {
	s.Simulator.Close()
	_ = s.srv.Close()
}

// iisHiddenSegments are IIS's default request-filtering hidden segments
// (applicationHost.config; iis.net, system.webServer/security/
// requestFiltering/hiddenSegments): a URL with any of them as a whole
// segment, in any case, gets IIS's 404 (substatus 404.8) before Acumatica
// sees it.
var iisHiddenSegments = []string{"web.config", "bin", "App_code", "App_GlobalResources", "App_LocalResources",
	"App_WebReferences", "App_Data", "App_Browsers"}

// hiddenByIIS reports whether IIS's request filtering hides path.
func hiddenByIIS(path string) bool {
	for _, seg := range strings.Split(path, "/") {
		for _, h := range iisHiddenSegments {
			if strings.EqualFold(seg, h) {
				return true
			}
		}
	}
	return false
}

// discard is a ResponseWriter that drops the answer: a fault AfterServing
// answers in its place.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}
