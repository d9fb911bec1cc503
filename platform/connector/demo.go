package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Demoer is implemented by a connector that brings a simulator with demo
// data, for `erpgate dev` and the end-to-end kit. The method lives in a
// file of the connector's package built only with -tags dev (e.g.
// connectors/frappe/demo_dev.go), so a release binary links no simulator.
// `erpgate dev` finds it with a type assertion on each registered
// connector, starts the demo, and does every admin-API call itself, the
// same for every kind: the connector gives data, never registers a site.
type Demoer interface {
	Demo(ctx context.Context, env DemoEnv) (*Demo, error)
}

// DemoEnv is what `erpgate dev` tells a connector's demo.
type DemoEnv struct {
	// Addr is where the demo site's simulator listens, from
	// ERPGATE_DEV_<KIND>_ADDR; empty means the connector's own default
	// (a fixed port, so that URLs stay the same between runs), and
	// "127.0.0.1:0" any free port.
	Addr string
	// RegistrationAddr is the same for the registration simulator, from
	// ERPGATE_DEV_<KIND>_REGISTER_ADDR.
	RegistrationAddr string
	// CallbackURL is erpgate's OAuth redirect URI for the site named slug,
	// for the OAuth client the demo creates on its simulator.
	CallbackURL func(slug string) string
	// Saved is what the demo passed to Save in an earlier run (nil on the
	// first), e.g. the OAuth clients a person created on the registration
	// simulator; Save keeps v (JSON) for the next run, under .data/. Save
	// may be called from any goroutine, and is done with v when it
	// returns. DemoSaved does both for a list.
	Saved json.RawMessage
	Save  func(v any)
}

// Demo is a running demo: a simulator with demo data and the site that
// `erpgate dev` registers for it.
type Demo struct {
	// Name is the ERP's name in dev's summary ("Frappe").
	Name string
	// URL is the simulator's base URL, the demo site's address.
	URL string
	// Close stops every simulator the demo started.
	Close func()
	Site  DemoSite
	// Registration is optional: a second simulator that no site uses,
	// for walking self-service registration at /register by hand.
	Registration *DemoRegistration
}

// DemoSite is the demo site `erpgate dev` registers through the admin API.
type DemoSite struct {
	Slug, DisplayName string
	// Settings and Credentials are the site's settings and its service
	// connection, as the admin API takes them. Dev also shows the
	// credentials and the settings that are strings (what registering a
	// second site by hand needs) in .data/dev.json.
	Settings    map[string]any
	Credentials map[string]string
	// OAuthClientID and OAuthClientSecret are the OAuth client the demo
	// created on its simulator for DemoEnv.CallbackURL, so that people
	// can sign in.
	OAuthClientID, OAuthClientSecret string
	// WriteApprover is the person (as the site names people) who approves
	// the writes the demo service token proposes.
	WriteApprover string
	Users         []DemoUser
}

// DemoUser is a person who can sign in to a simulator.
type DemoUser struct {
	Username, Password string
	// Role is the persona shown beside the user ("Sales User").
	Role string
	// Admin marks the ERP's administrator, who may register a site.
	Admin bool
}

// DemoRegistration is a simulator no site uses: where its administrator
// signs in and creates the OAuth client that /register asks for.
type DemoRegistration struct {
	URL string
	// Tenant is the tenant to name at sign-in, where the ERP has tenants.
	Tenant         string
	SignInURL      string
	OAuthClientURL string
	Users          []DemoUser
}

// ServeDemo serves h on addr, or on fallback when addr is empty, and
// returns its base URL ("http://127.0.0.1:8101") and a function that
// stops it. It is for a connector's Demo.
func ServeDemo(addr, fallback string, h http.Handler) (string, func(), error) {
	if addr == "" {
		addr = fallback
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// DemoSaved is a list that a demo keeps across runs of `erpgate dev`
// through DemoEnv.Saved and DemoEnv.Save, each value known by its id: the
// OAuth clients a person creates on a registration simulator, say. It is
// safe for concurrent use.
type DemoSaved[T any] struct {
	mu    sync.Mutex
	id    func(T) string
	save  func(any)
	items []T
}

// NewDemoSaved reads the list env.Saved holds (none on a first run).
func NewDemoSaved[T any](env DemoEnv, id func(T) string) (*DemoSaved[T], error) {
	s := &DemoSaved[T]{id: id, save: env.Save}
	if len(env.Saved) > 0 {
		if err := json.Unmarshal(env.Saved, &s.items); err != nil {
			return nil, fmt.Errorf("read what the demo saved: %w", err)
		}
	}
	return s, nil
}

// Items returns the list.
func (s *DemoSaved[T]) Items() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.items)
}

// Put replaces the value with v's id, or appends v, and saves the list.
func (s *DemoSaved[T]) Put(v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.items, func(old T) bool { return s.id(old) == s.id(v) })
	if i >= 0 {
		s.items[i] = v
	} else {
		s.items = append(s.items, v)
	}
	if s.save != nil {
		s.save(s.items)
	}
}
