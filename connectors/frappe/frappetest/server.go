package frappetest

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a simulator. The zero value gives the seeded demo data
// and no added latency.
type Options struct {
	// Latency is added before every response (benchmarks use 0 and 20ms).
	Latency time.Duration
	// Now supplies "today" for status/overdue derivation. The default is a
	// fixed date, 2026-06-15, so data is deterministic. It is read once,
	// when the simulator is created.
	Now func() time.Time
	// ExtraSalesInvoices adds that many submitted, unpaid Sales Invoices
	// (with their GL and Payment Ledger entries) on top of the seeded
	// data, for benchmarks that need large reports: about 3.5 GL Entries
	// and one Accounts Receivable row each (30000 give a General Ledger of
	// over 50,000 rows for the NZ company). The seeded business documents
	// are the same with or without them; ledger entry names are not.
	ExtraSalesInvoices int
	// ExtraCustomers adds customers with these names, created and modified
	// after every seeded document (a minute apart, in order), without
	// documents. The seeded data is the same with or without them.
	ExtraCustomers []string
	// ExtraCustomerCurrency is the default currency of the ExtraCustomers
	// ("" is NZD), e.g. "JPY" for customers billed in yen, a currency
	// without decimals. The seeded data is the same whatever it is.
	ExtraCustomerCurrency string
	// AccentSensitiveLike makes "like" ignore case but not accents, as
	// Frappe on PostgreSQL does (it sends ILIKE) and as MariaDB does under
	// an accent-sensitive collation: "%cafe%" no longer matches "Café".
	// "=" and ordering keep the default collation.
	AccentSensitiveLike bool
	// SalesUnits gives items, by item code, a sales unit other than their
	// stock unit: the Item's sales_uom, and a row of its UOM Conversion
	// Detail saying how many stock units one is. As in ERPNext
	// (get_item_details), a Sales Order line that names no uom is then
	// in the sales unit: its qty counts sales units, its stock_qty is
	// qty × the factor, and its price list rate is the stock unit's ×
	// the factor.
	SalesUnits map[string]SalesUnit
	// MissingDoctypes are DocTypes this site does not have (an app not
	// installed): lists, reads and counts of them answer 404 "DocType X
	// not found", as Frappe does.
	MissingDoctypes []string
	// MissingFields are fields, by DocType, that this site's schema does
	// not have, as on an older release or a customised site: list queries
	// naming them in fields or filters get 417 DataError "Field not
	// permitted in query", and documents do not carry them.
	MissingFields map[string][]string
	// ClientAdded, when set, is called with each OAuth Client created
	// (AddClient, RegisterClient, the REST API or the desk form), so that
	// a development set-up can keep them across restarts (PutClient).
	ClientAdded func(OAuthClient)
	// FiscalYearCompanies links each seeded Fiscal Year named here to only
	// these companies (an empty list: to no company, a year every company
	// shares), as a site whose companies keep different fiscal years has
	// them. By default every seeded year is linked to every company.
	FiscalYearCompanies map[string][]string
	// Translations translate report labels as the site's language does:
	// where ERPNext wraps a label in _() (the quoted 'Opening', 'Total'
	// and 'Closing (Opening + Total)' rows of the General Ledger, the
	// Trial Balance's 'Total', the Profit and Loss Statement's "Total {0}
	// ({1})" with its root type and balance side, 'Profit for the year',
	// the Stock Ledger's "'Opening'" (quotes included) and the Bank
	// Reconciliation Statement's four summary lines), a user whose
	// language is not English gets the translation.
	// Keys are the English source strings; nil means English.
	Translations map[string]string
	// PreparedReports are reports this site runs as prepared reports on
	// top of Stock Balance (whose report JSON says so): an administrator
	// ticked Prepared Report, or Frappe ticked it itself after one run
	// took over 15 seconds (report.py enable_prepared_report), as a large
	// site's General Ledger does. query_report.run then answers them with
	// the empty prepared-report envelope unless ignore_prepared_report.
	PreparedReports []string
	// FrappeVersion is the framework's version get_versions reports
	// (default 15.55.1, the release shared/erp-api/frappe/api-facts.md was read from).
	FrappeVersion string
	// RefreshGrantForbidden makes get_token answer every refresh_token
	// grant of a known refresh token with 403 PermissionError "No
	// permission for User", as Frappe 15.94.1 does (frappe/frappe issue
	// 36132, fixed by PR 36145): get_token runs as Guest, and
	// validate_refresh_token read the OAuth Bearer Token, which links to
	// User, without ignore_permissions. Code grants still work.
	RefreshGrantForbidden bool
	// CurrencyPrecision and NumberFormat are System Settings'
	// currency_precision ("" by default: not set) and number_format
	// (default "#,###.##"). Frappe v15 rounds every Currency field without
	// a precision of its own to the first when it is set, else to the
	// number format's places ("#,###.###": 3, "#,###": 0), site-wide,
	// whatever the document's currency (get_field_precision): a Sales
	// Order written on a site set up for Kuwait keeps rates and amounts
	// to three places. Only a System Manager may read System Settings.
	CurrencyPrecision string
	NumberFormat      string
	// RoundingMethod is System Settings' rounding_method, how flt rounds
	// a tie: "Banker's Rounding (legacy)" (the default) up at a precision
	// above 0 and to even at 0, "Banker's Rounding" always to even,
	// "Commercial Rounding" away from zero.
	RoundingMethod string
	// FloatPrecision is System Settings' float_precision ("" by default:
	// 3), the precision of a Float field such as a line's qty. A written
	// line keeps its qty in thousandths, so only "2" and "3" are modelled
	// (a higher one acts as 3).
	FloatPrecision string
}

// Simulator is the Frappe v15 HTTP API as an http.Handler, without a
// listener. It is safe for concurrent use.
type Simulator struct {
	opts     Options
	today    time.Time
	reg      *registry
	data     *Dataset
	usersMu  sync.RWMutex
	users    []User // replaced, never modified in place (AddUser)
	tokens   *tokenStore
	sessions *sessionStore

	mu     sync.Mutex
	faults []*faultState
	hits   map[string]int

	// cur is the data as written (written.go); writeMu serialises writes
	// and guards lastStamp.
	cur       atomic.Pointer[Dataset]
	writeMu   sync.Mutex
	lastStamp time.Time
}

// NewHandler builds a simulator that can be mounted on any server.
func NewHandler(opts Options) *Simulator {
	today := defaultToday
	if opts.Now != nil {
		today = opts.Now()
	}
	reg, data := sharedDataset(today, opts.ExtraSalesInvoices, opts.ExtraCustomers, opts.ExtraCustomerCurrency)
	s := &Simulator{
		opts:     opts,
		today:    time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC),
		reg:      withoutFields(reg, opts.MissingFields),
		data:     data,
		users:    demoUsers(),
		tokens:   newTokenStore(),
		sessions: &sessionStore{sids: map[string]string{}},
		hits:     map[string]int{},
	}
	s.cur.Store(data)
	for code, su := range opts.SalesUnits {
		it := data.Get("Item", code)
		if it == nil || su.UOM == "" || su.Factor < 2 {
			panic("frappetest: SalesUnits: no seeded Item " + code + ", or no unit of more than one stock unit")
		}
		d := it.clone()
		d.Fields["sales_uom"] = su.UOM
		s.cur.Store(s.dataset().withDoc(d))
	}
	for year, companies := range opts.FiscalYearCompanies {
		fy := data.Get("Fiscal Year", year)
		if fy == nil {
			panic("frappetest: no seeded Fiscal Year " + year)
		}
		d := fy.clone()
		var kept []*Doc
		for _, c := range d.Children["companies"] {
			if slices.Contains(companies, c.Str("company")) {
				c.Fields["idx"] = int64(len(kept) + 1)
				kept = append(kept, c)
			}
		}
		d.Children["companies"] = kept
		s.cur.Store(s.dataset().withDoc(d))
	}
	return s
}

// Data returns the seeded data (read-only) so tests can compute expected
// values independently of the HTTP layer. Simulators built with the same
// "today" and ExtraSalesInvoices share one Dataset: never modify it.
// Documents written through the API are not in it (see Written).
func (s *Simulator) Data() *Dataset { return s.data }

// Users returns the demo users and their credentials.
func (s *Simulator) Users() []User {
	users := s.userList()
	out := make([]User, len(users))
	copy(out, users)
	return out
}

// User returns the demo user with the given Role ("all-companies",
// "one-company", "no-accounting", "service"), or the zero User.
func (s *Simulator) User(role string) User {
	for _, u := range s.userList() {
		if u.Role == role {
			return u
		}
	}
	return User{}
}

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

// missing reports whether doctype is one of Options.MissingDoctypes.
func (s *Simulator) missing(doctype string) bool {
	return slices.Contains(s.opts.MissingDoctypes, doctype)
}

// Handler returns the simulator as an http.Handler.
func (s *Simulator) Handler() http.Handler { return s }

// ServeHTTP counts the request, applies latency and faults, authenticates
// and dispatches to the Frappe API routes.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	if s.opts.Latency > 0 && !sleepCtx(r.Context(), s.opts.Latency) {
		return
	}
	if f := s.takeFault(r.URL.Path); f != nil {
		if s.applyFault(f, w, r) {
			return
		}
		if f.DripBytesPerSecond > 0 {
			dw := &bufferedWriter{header: http.Header{}}
			s.serveAPI(dw, r)
			dw.drip(w, r.Context(), f.DripBytesPerSecond)
			return
		}
	}
	s.serveAPI(w, r)
}

// sleepCtx waits d or until ctx ends; it reports whether d elapsed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// SalesUnit is an item's sales unit (Options.SalesUnits): the UOM, and
// how many stock units one is (a whole number above 1).
type SalesUnit struct {
	UOM    string
	Factor int64
}

// lineUnit is the uom and conversion factor of a Sales Order line of item
// it whose uom field says uom ("" when the request names none): as
// get_item_details, the item's sales unit when it has one, else its stock
// unit; a uom with no conversion of the item's counts as one stock unit
// (get_conversion_factor's default).
func (s *Simulator) lineUnit(it *Doc, uom string) (string, int64) {
	stock := it.Str("stock_uom")
	if uom == "" {
		uom = it.Str("sales_uom")
	}
	if uom == "" || uom == stock {
		return stock, 1
	}
	if su, ok := s.opts.SalesUnits[it.Name]; ok && su.UOM == uom {
		return uom, su.Factor
	}
	return uom, 1
}

// Server is a simulator listening on a loopback port, like
// httptest.Server.
type Server struct {
	*Simulator
	// URL is the base URL, "http://127.0.0.1:port".
	URL string
	srv *http.Server
	ln  net.Listener
}

// NewServer starts a simulator on 127.0.0.1 with a random free port.
func NewServer(opts Options) *Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("frappetest: listen: " + err.Error())
	}
	sim := NewHandler(opts)
	s := &Server{Simulator: sim, URL: "http://" + ln.Addr().String(), ln: ln,
		srv: &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

// Close stops the server and closes all open connections.
func (s *Server) Close() { _ = s.srv.Close() }

// userName is the Frappe session user name.
func userName(u *User) string {
	if u == nil {
		return "Guest"
	}
	return u.Email
}
