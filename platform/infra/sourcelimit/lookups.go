package sourcelimit

import (
	"fmt"
	"net/http"
	"time"
)

// Lookups bounds how many presented credentials (bearer tokens, service
// tokens) one source may make a replica look up in the database and find
// invalid. A cache holds the valid ones, so an unknown token is the one
// request that always reaches the database: without a bound, anyone could
// keep the database busy for every tenant by sending made-up tokens. A
// lookup is let through while the source's bucket has a request left, and
// charged only when the credential is not valid or cannot be served (its
// site is disabled: not cached either), so people and bots with usable
// tokens are never charged, however many share an address. Lookups
// let through at once are all charged, into debt: a source cannot get
// more than its rate by sending many at a time.
type Lookups struct {
	limiter *Limiter
	ip      func(*http.Request) string
}

// DefaultLookups is the bound when NewLookups is given a zero Limit: 100
// invalid credentials at once, then ten a second. A thousand clients
// behind one address whose tokens all expired overnight have all been
// answered 401, and so refresh, within about 90 s (429 with Retry-After
// until then); a source that makes up tokens costs the database little.
var DefaultLookups = Limit{Burst: 100, Every: 100 * time.Millisecond}

// NewLookups returns the bound; ip tells a request's client address
// (DirectIP when nil).
func NewLookups(limit Limit, ip func(*http.Request) string) *Lookups {
	if ip == nil {
		ip = DirectIP
	}
	return &Lookups{limiter: New(limit.WithDefault(DefaultLookups), time.Now), ip: ip}
}

// Admit lets one lookup of a source through, or refuses it; charge is to
// be called when the credential looked up is not valid.
type Admit func() (charge func(), err error)

// For returns r's Admit. A nil Lookups admits every lookup.
func (g *Lookups) For(r *http.Request) Admit {
	if g == nil {
		return func() (func(), error) { return func() {}, nil }
	}
	return func() (func(), error) {
		// Only a lookup needs the source: a cached token costs nothing.
		source := Source(g.ip(r))
		if ok, wait, first := g.limiter.Check(source); !ok {
			return nil, &LookupsRefused{Source: source, Wait: wait, First: first}
		}
		return func() { g.limiter.Charge(source) }, nil
	}
}

// LookupsRefused is Admit's refusal: the source sent too many invalid
// credentials. Answer 429 with RetryAfter(Wait); log when First (the
// first refusal in a row).
type LookupsRefused struct {
	Source string
	Wait   time.Duration
	First  bool
}

func (e *LookupsRefused) Error() string {
	return fmt.Sprintf("too many invalid tokens from %s", e.Source)
}

// Answer sets Retry-After on h and returns the refusal in words for the
// client.
func (e *LookupsRefused) Answer(h http.Header) string {
	secs := RetryAfter(h, e.Wait)
	unit := "seconds"
	if secs == 1 {
		unit = "second"
	}
	return fmt.Sprintf("too many requests from your address carried a token that is not valid; retry in %d %s", secs, unit)
}
