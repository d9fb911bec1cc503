package frappetest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestFaultStatusTimesAndCounts(t *testing.T) {
	s := newServer(t, Options{})
	auth := tokenAuth(s.User("service"))
	s.SetFault(Fault{PathPrefix: "/api/resource/Customer", Times: 2, Status: 503, RetryAfter: "3"})
	for i := 0; i < 2; i++ {
		r := call(t, s, auth, "/api/resource/Customer", nil)
		if r.status != 503 || r.header.Get("Retry-After") != "3" || r.body["exc_type"] == nil {
			t.Fatalf("fault %d: %d %s", i, r.status, r.raw)
		}
	}
	call(t, s, auth, "/api/resource/Customer", nil).expectStatus(t, 200)
	call(t, s, auth, "/api/resource/Item", nil).expectStatus(t, 200)
	if n := s.RequestCount("/api/resource/Customer"); n != 3 {
		t.Fatalf("RequestCount = %d", n)
	}
	if n := s.RequestCount(""); n != 4 {
		t.Fatalf("RequestCount all = %d", n)
	}
	for _, st := range []int{429, 500, 502} {
		s.SetFault(Fault{Times: 1, Status: st})
		r := call(t, s, auth, "/api/method/frappe.auth.get_logged_user", nil)
		if r.status != st || r.body["exc_type"] == nil {
			t.Fatalf("status %d: %d %s", st, r.status, r.raw)
		}
	}
	s.SetFault(Fault{Status: 500}) // until cleared
	call(t, s, auth, "/api/resource/Item", nil).expectStatus(t, 500)
	call(t, s, auth, "/api/resource/Item", nil).expectStatus(t, 500)
	s.ClearFaults()
	call(t, s, auth, "/api/resource/Item", nil).expectStatus(t, 200)
}

func TestFaultBodies(t *testing.T) {
	s := newServer(t, Options{})
	auth := tokenAuth(s.User("service"))
	s.SetFault(Fault{Times: 1, Body: []byte(`{"data": [`)})
	r := call(t, s, auth, "/api/resource/Customer", nil)
	if r.status != 200 || r.raw != `{"data": [` {
		t.Fatalf("raw body fault: %d %q", r.status, r.raw)
	}
	s.SetFault(Fault{Times: 1, BodySize: 1 << 20})
	r = call(t, s, auth, "/api/resource/Customer", nil)
	if len(r.raw) < 1<<20-200 || len(r.raw) > 1<<20+200 {
		t.Fatalf("huge body size %d", len(r.raw))
	}
	var v struct{ Data []map[string]any }
	if err := json.Unmarshal([]byte(r.raw), &v); err != nil || len(v.Data) < 1000 {
		t.Fatalf("huge body not valid JSON: %v (%d rows)", err, len(v.Data))
	}
	s.SetFault(Fault{Times: 1, DripBytesPerSecond: 20000})
	r = call(t, s, auth, "/api/resource/Customer", map[string]string{"limit_page_length": "3"})
	if r.status != 200 || len(r.rows(t)) != 3 {
		t.Fatalf("drip of a normal response: %d %s", r.status, r.raw)
	}
	s.SetFault(Fault{Times: 1, Delay: 10 * time.Millisecond})
	call(t, s, auth, "/api/resource/Customer", nil).expectStatus(t, 200)
}

func TestFaultHangRespectsClient(t *testing.T) {
	s := newServer(t, Options{})
	s.SetFault(Fault{Times: 1, Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/resource/Customer", nil)
	req.Header.Set("Authorization", tokenAuth(s.User("service")))
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		t.Fatal("hang fault answered")
	}
	// The next request is served normally.
	call(t, s, tokenAuth(s.User("service")), "/api/resource/Customer", nil).expectStatus(t, 200)
}

func TestFaultResetConnection(t *testing.T) {
	s := newServer(t, Options{})
	s.SetFault(Fault{Times: 1, ResetConnection: true})
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/resource/Customer", nil)
	res, err := client.Do(req)
	if err == nil {
		_, err = io.ReadAll(res.Body)
		res.Body.Close()
		if err == nil {
			t.Fatal("expected a connection error")
		}
	}
	if !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "reset") {
		t.Logf("connection error: %v", err)
	}
}
