package manage

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/web/pagekit"
)

// post sends a signed-in owner's form to the owner's page of p.acme, with
// this browser's form token.
func (p *pages) post(t *testing.T, path string, form url.Values, user string) (int, string) {
	t.Helper()
	binding := strings.Repeat("b", 43)
	form.Set("csrf", pagekit.CSRFToken(binding, csrfPurpose(p.acme)))
	req, err := http.NewRequest(http.MethodPost, p.srv.URL+"/sites/acme/manage"+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(p.session(p.acme, user))
	req.AddCookie(&http.Cookie{Name: csrfCookie, Value: binding})
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// A Writes form refused for one of its values changes none of them: the
// page says the form was refused and shows what was sent, so a part of it
// saved behind the owner's back (service tokens allowed to write, with the
// approver they meant to replace) must not happen.
func TestRefusedWritesFormChangesNothing(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	const user = "it.admin@demo.example"
	if _, err := p.h.deps.Admin.ChangeSetting(ctx, siteadmin.ERPAdmin(user), &p.acme, livesettings.ServiceWriteApprover, "alice@demo.example", false); err != nil {
		t.Fatal(err)
	}
	tool := p.h.writeTools("frappe")[0].Name
	status, body := p.post(t, "/writes", url.Values{
		"write_tool": {tool}, "service_writes": {"on"}, "approver": {strings.Repeat("b", 201)},
	}, user)
	if status != http.StatusBadRequest || !strings.Contains(body, "at most 200 characters") {
		t.Fatalf("HTTP %d, want 400 naming the approver's limit: %s", status, body)
	}
	snap := p.h.deps.Settings.Current()
	if v, _, _ := snap.Effective(p.acme.ID, livesettings.WriteTools); v != nil && len(v.([]string)) != 0 {
		t.Errorf("write tools after the refused form: %v, want none", v)
	}
	if v, _, _ := snap.Effective(p.acme.ID, livesettings.ServiceWrites); v == true {
		t.Errorf("service writes after the refused form: %v, want off", v)
	}
	if v, _, _ := snap.Effective(p.acme.ID, livesettings.ServiceWriteApprover); v != "alice@demo.example" {
		t.Errorf("approver after the refused form: %v", v)
	}
	events, err := p.h.deps.Store.ListEvents(ctx, p.acme.ID, time.Time{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 || events[0].Action != siteadmin.ActionChangeSetting || events[0].Outcome != siteadmin.OutcomeRefused ||
		events[0].Details["setting"] != livesettings.ServiceWriteApprover {
		t.Errorf("the last event is %+v, want the refused change of the approver", events[0])
	}
}
