package pagekit

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// A user session holds for its own scope and purpose until it expires;
// another scope, another purpose's cookie (same key) or a changed value
// gives nothing.
func TestUserSession(t *testing.T) {
	kit, err := New("https://gw.example")
	if err != nil {
		t.Fatal(err)
	}
	signer := NewSigner([]byte(strings.Repeat("k", 32)))
	ends := &memEnds{}
	owner := UserSession{Kit: kit, Signer: signer, Cookie: "erpgate_owner", Purpose: "owner", Lifetime: 30 * time.Minute, Ends: ends}
	approve := UserSession{Kit: kit, Signer: signer, Cookie: "erpgate_owner", Purpose: "approve", Lifetime: 30 * time.Minute, Ends: ends}
	now := time.Unix(1_800_000_000, 0)
	rec := httptest.NewRecorder()
	mustStart(t, owner, rec, "site-1", "ana@example.com", now)
	cookie := rec.Result().Cookies()[0]
	if cookie.Name != "__Host-erpgate_owner" || !cookie.HttpOnly || !cookie.Secure || cookie.MaxAge != 1800 {
		t.Fatalf("cookie %+v", cookie)
	}
	req := func(value string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "https://gw.example/", nil)
		r.AddCookie(&http.Cookie{Name: cookie.Name, Value: value})
		return r
	}
	if u, ok, err := owner.User(req(cookie.Value), "site-1", now.Add(29*time.Minute)); !ok || u != "ana@example.com" || err != nil {
		t.Fatalf("own session: %q, %v, %v", u, ok, err)
	}
	for name, c := range map[string]struct {
		s     UserSession
		value string
		scope string
		at    time.Time
	}{
		"another scope":             {owner, cookie.Value, "site-2", now},
		"another purpose":           {approve, cookie.Value, "site-1", now},
		"expired":                   {owner, cookie.Value, "site-1", now.Add(30 * time.Minute)},
		"a changed value":           {owner, "AAAA" + cookie.Value[4:], "site-1", now},
		"a scope without users":     {owner, signer.Sign("owner", "site-1|", now.Add(time.Hour)), "site-1", now},
		"an id without a scope":     {owner, signer.Sign("owner", "v1:site-1|ana@example.com", now.Add(time.Hour)), "site-1", now},
		"another scope after an id": {owner, signer.Sign("owner", "v1:x:site-2|ana@example.com", now.Add(time.Hour)), "site-1", now},
		"a mark that is not one":    {owner, signer.Sign("owner", "v1:x.y:site-1|ana@example.com", now.Add(time.Hour)), "site-1", now},
		"a mark of zero":            {owner, signer.Sign("owner", "v1:x.0:site-1|ana@example.com", now.Add(time.Hour)), "site-1", now},
	} {
		if u, ok, _ := c.s.User(req(c.value), c.scope, c.at); ok {
			t.Errorf("%s: accepted as %q", name, u)
		}
	}
	if len(ends.ended) != 0 {
		t.Fatalf("sessions ended before End: %v", ends.ended)
	}
	rec = httptest.NewRecorder()
	if err := owner.End(rec, req(cookie.Value), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if c := rec.Result().Cookies()[0]; c.MaxAge >= 0 || c.Value != "" {
		t.Errorf("End set %+v", c)
	}
	if exp, ok := ends.ended[cookie.Value]; !ok || !exp.Equal(now.Add(30*time.Minute)) {
		t.Errorf("End recorded %v", ends.ended)
	}
	if u, ok, err := owner.User(req(cookie.Value), "site-1", now.Add(2*time.Minute)); ok || err != nil {
		t.Errorf("the ended session: %q, %v, %v", u, ok, err)
	}
	// A request without a session ends nothing, and clears the cookie.
	rec = httptest.NewRecorder()
	if err := owner.End(rec, httptest.NewRequest(http.MethodPost, "https://gw.example/", nil), now); err != nil || len(ends.ended) != 1 {
		t.Errorf("End without a session: %v, %v", err, ends.ended)
	}
}

// Two sign-ins of one person on one scope in the same second are two
// sessions: ending one leaves the other. A session made before sessions
// had ids ("<scope>|<user>") holds until it expires, and ends like any.
func TestUserSessionsEndOneByOne(t *testing.T) {
	kit, err := New("https://gw.example")
	if err != nil {
		t.Fatal(err)
	}
	signer := NewSigner([]byte(strings.Repeat("k", 32)))
	s := UserSession{Kit: kit, Signer: signer, Cookie: "erpgate_owner", Purpose: "owner", Lifetime: 30 * time.Minute, Ends: &memEnds{}}
	now := time.Unix(1_800_000_000, 0)
	req := func(value string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "https://gw.example/", nil)
		r.AddCookie(&http.Cookie{Name: "__Host-erpgate_owner", Value: value})
		return r
	}
	start := func() string {
		rec := httptest.NewRecorder()
		mustStart(t, s, rec, "site-1", "ana@example.com", now)
		return rec.Result().Cookies()[0].Value
	}
	first, second := start(), start()
	legacy := signer.Sign("owner", "site-1|ana@example.com", now.Add(30*time.Minute))
	if first == second {
		t.Fatal("two sign-ins in one second have one cookie")
	}
	if err := s.End(httptest.NewRecorder(), req(first), now); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		value string
		want  bool
	}{"the ended session": {first, false}, "the other sign-in": {second, true}, "a session made before ids": {legacy, true}} {
		if u, ok, err := s.User(req(c.value), "site-1", now); ok != c.want || err != nil || (ok && u != "ana@example.com") {
			t.Errorf("%s: %q, %v, %v", name, u, ok, err)
		}
	}
	if err := s.End(httptest.NewRecorder(), req(legacy), now); err != nil {
		t.Fatal(err)
	}
	if u, ok, _ := s.User(req(legacy), "site-1", now); ok {
		t.Errorf("the session made before ids, ended: %q", u)
	}
}

// A session that cannot be checked is refused: when there is nothing to
// check it against, or the check fails.
func TestUserSessionUncheckedIsRefused(t *testing.T) {
	kit, err := New("https://gw.example")
	if err != nil {
		t.Fatal(err)
	}
	s := UserSession{Kit: kit, Signer: NewSigner([]byte(strings.Repeat("k", 32))), Cookie: "erpgate_owner", Purpose: "owner", Lifetime: 30 * time.Minute, Ends: &memEnds{}}
	now := time.Unix(1_800_000_000, 0)
	rec := httptest.NewRecorder()
	mustStart(t, s, rec, "site-1", "ana@example.com", now)
	s.Ends = nil
	if _, err := s.Start(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "https://gw.example/", nil), "site-1", "ana@example.com", now); err == nil {
		t.Error("Start without Ends reported no error")
	}
	r := httptest.NewRequest(http.MethodGet, "https://gw.example/", nil)
	r.AddCookie(rec.Result().Cookies()[0])
	if u, ok, err := s.User(r, "site-1", now); ok || err == nil {
		t.Errorf("without Ends: %q, %v, %v", u, ok, err)
	}
	if err := s.End(httptest.NewRecorder(), r, now); err == nil {
		t.Error("End without Ends reported no error")
	}
	if err := s.EndEverywhere(httptest.NewRecorder(), r, "site-1", "ana@example.com", now); err == nil {
		t.Error("EndEverywhere without Ends reported no error")
	}
	s.Ends = &memEnds{fail: errors.New("database down")}
	if u, ok, err := s.User(r, "site-1", now); ok || err == nil {
		t.Errorf("with a failing check: %q, %v, %v", u, ok, err)
	}
	rec = httptest.NewRecorder()
	if v, err := s.Start(rec, r, "site-1", "ana@example.com", now); err == nil || v != "" || len(rec.Result().Cookies()) != 0 {
		t.Errorf("Start with no mark to take: %q, %v, cookies %v", v, err, rec.Result().Cookies())
	}
}

// mustStart starts s's session for user on scope at now, in rec.
func mustStart(t *testing.T, s UserSession, rec *httptest.ResponseRecorder, scope, user string, now time.Time) {
	t.Helper()
	if _, err := s.Start(rec, httptest.NewRequest(http.MethodGet, "https://gw.example/", nil), scope, user, now); err != nil {
		t.Fatal(err)
	}
}

// memEnds is SessionEnds in memory, for the kit's own tests; the pages'
// tests use platform/store/pagesession on Postgres.
type memEnds struct {
	ended map[string]time.Time
	// marks is the last mark given; everywhere the mark each person's
	// sessions below which ended.
	marks      int64
	everywhere map[string]int64
	fail       error
}

func (m *memEnds) Mark(context.Context) (int64, error) {
	m.marks++
	return m.marks, m.fail
}

func (m *memEnds) EndEverywhere(_ context.Context, person string, _ time.Time) error {
	if m.everywhere == nil {
		m.everywhere = map[string]int64{}
	}
	m.marks++
	m.everywhere[person] = m.marks
	return m.fail
}

func (m *memEnds) End(_ context.Context, cookie string, expires time.Time) error {
	if m.ended == nil {
		m.ended = map[string]time.Time{}
	}
	m.ended[cookie] = expires
	return m.fail
}

func (m *memEnds) Ended(_ context.Context, cookie, person string, mark int64) (bool, error) {
	_, ok := m.ended[cookie]
	return ok || mark < m.everywhere[person], m.fail
}

// Ending a person's sessions everywhere ends each of theirs on the scope
// for the purpose that began before it, whatever the case of the name the
// ERP gave at sign-in, and sessions made before marks or ids; not one
// begun after, another person's, theirs on another scope, nor their
// sessions of another page. It deletes this browser's cookie too.
func TestUserSessionEndEverywhere(t *testing.T) {
	kit, err := New("https://gw.example")
	if err != nil {
		t.Fatal(err)
	}
	signer := NewSigner([]byte(strings.Repeat("k", 32)))
	ends := &memEnds{}
	owner := UserSession{Kit: kit, Signer: signer, Cookie: "erpgate_owner", Purpose: "owner", Lifetime: 30 * time.Minute, Ends: ends}
	approve := UserSession{Kit: kit, Signer: signer, Cookie: "erpgate_owner", Purpose: "approve", Lifetime: 30 * time.Minute, Ends: ends}
	now := time.Unix(1_800_000_000, 0)
	req := func(value string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "https://gw.example/", nil)
		r.AddCookie(&http.Cookie{Name: "__Host-erpgate_owner", Value: value})
		return r
	}
	start := func(s UserSession, scope, user string) string {
		rec := httptest.NewRecorder()
		mustStart(t, s, rec, scope, user, now)
		return rec.Result().Cookies()[0].Value
	}
	here, forgotten, shouted := start(owner, "site-1", "ana@example.com"), start(owner, "site-1", "ana@example.com"), start(owner, "site-1", "ANA@example.com")
	beforeIDs := signer.Sign("owner", "site-1|ana@example.com", now.Add(30*time.Minute))
	beforeMarks := signer.Sign("owner", "v1:abc:site-1|ana@example.com", now.Add(30*time.Minute))
	bobs, elsewhere, approval := start(owner, "site-1", "bob@example.com"), start(owner, "site-2", "ana@example.com"), start(approve, "site-1", "ana@example.com")
	rec := httptest.NewRecorder()
	if err := owner.EndEverywhere(rec, req(here), "site-1", "ana@example.com", now); err != nil {
		t.Fatal(err)
	}
	if c := rec.Result().Cookies()[0]; c.MaxAge >= 0 || c.Value != "" {
		t.Errorf("EndEverywhere set %+v", c)
	}
	after := start(owner, "site-1", "ana@example.com")
	for name, c := range map[string]struct {
		s     UserSession
		value string
		scope string
		want  bool
	}{
		"the session signed out from":          {owner, here, "site-1", false},
		"another browser's":                    {owner, forgotten, "site-1", false},
		"a sign-in the ERP named in capitals":  {owner, shouted, "site-1", false},
		"a session made before ids":            {owner, beforeIDs, "site-1", false},
		"a session made before marks":          {owner, beforeMarks, "site-1", false},
		"a session begun after":                {owner, after, "site-1", true},
		"another person's":                     {owner, bobs, "site-1", true},
		"the person's on another scope":        {owner, elsewhere, "site-2", true},
		"the person's session of another page": {approve, approval, "site-1", true},
	} {
		if _, ok, err := c.s.User(req(c.value), c.scope, now); ok != c.want || err != nil {
			t.Errorf("%s: signed in %v (%v), want %v", name, ok, err, c.want)
		}
	}
}

func TestCrossOriginAndFormAction(t *testing.T) {
	kit, err := New("https://gw.example/prefix")
	if err != nil {
		t.Fatal(err)
	}
	for origin, cross := range map[string]bool{"": false, "https://gw.example": false, "HTTPS://GW.EXAMPLE": false,
		"https://attacker.example": true, "http://gw.example": true, "null": true} {
		r := httptest.NewRequest(http.MethodPost, "https://gw.example/prefix/x", nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if got := kit.CrossOrigin(r); got != cross {
			t.Errorf("Origin %q: cross-origin %v, want %v", origin, got, cross)
		}
	}
	// A base URL that spells out the scheme's default port is the same
	// origin as one without it, which is how browsers send it.
	for base, origin := range map[string]string{"https://gw.example:443": "https://gw.example", "http://127.0.0.1:80": "http://127.0.0.1",
		"https://[2001:db8::1]:443/x": "https://[2001:db8::1]"} {
		k, err := New(base)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, base, nil)
		r.Header.Set("Origin", origin)
		if k.CrossOrigin(r) {
			t.Errorf("base URL %s: its own origin %s is called cross-origin", base, origin)
		}
	}
	if got := FormActionWith("https://erp.example:8443/erp/path"); !slices.Equal(got, []string{"'self'", "https://erp.example:8443"}) {
		t.Errorf("FormActionWith = %v", got)
	}
	if got := FormActionWith("::"); !slices.Equal(got, []string{"'self'"}) {
		t.Errorf("FormActionWith of no URL = %v", got)
	}
}

// Ending a session records it until the cookie itself expires, as signed
// at its start, whatever the clock of the replica that ends it: one behind
// must not record an expiry the sweep deletes while the cookie still
// works, and one ahead (for which the cookie looks expired already) must
// still record it, as other replicas accept it until its own expiry.
func TestUserSessionEndRecordsTheCookiesOwnExpiry(t *testing.T) {
	kit, err := New("https://gw.example")
	if err != nil {
		t.Fatal(err)
	}
	signer := NewSigner([]byte(strings.Repeat("k", 32)))
	start := time.Unix(1_800_000_000, 0)
	for name, skew := range map[string]time.Duration{"a replica 2 h behind": -2 * time.Hour, "a replica 40 min ahead": 40 * time.Minute} {
		ends := &memEnds{}
		s := UserSession{Kit: kit, Signer: signer, Cookie: "erpgate_owner", Purpose: "owner", Lifetime: 30 * time.Minute, Ends: ends}
		rec := httptest.NewRecorder()
		mustStart(t, s, rec, "site-1", "ana@example.com", start)
		r := httptest.NewRequest(http.MethodPost, "https://gw.example/", nil)
		r.AddCookie(rec.Result().Cookies()[0])
		if err := s.End(httptest.NewRecorder(), r, start.Add(5*time.Minute+skew)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := ends.ended[rec.Result().Cookies()[0].Value]; !got.Equal(start.Add(30 * time.Minute)) {
			t.Errorf("%s: the end is recorded until %v, want the cookie's own expiry %v", name, got, start.Add(30*time.Minute))
		}
		if u, ok, _ := s.User(r, "site-1", start.Add(10*time.Minute)); ok {
			t.Errorf("%s: the ended session still works on a replica on time: %q", name, u)
		}
	}
}
