package mcpengine

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/store/approval"
)

// TestAnApprovedWriteLeftWithTooLittleTimeKeepsItsApproval: the approved
// run of a write that starts with under half its budget left is refused
// as busy, as its proposal is (TestAWriteLeftWithTooLittleTimeIsRefusedAsBusy):
// nothing reaches the ERP, the approval stays approved, and the same call
// made again with its whole budget writes once.
func TestAnApprovedWriteLeftWithTooLittleTimeKeepsItsApproval(t *testing.T) {
	const budget = 2 * time.Second
	f := newWriteFixtureWith(t, func(o *Options) { o.Budget, o.BodyTimeout = budget, time.Minute })
	endpoint := f.service(t, "bot")
	const args = `{"name":"Widget","qty":2}`

	status, body := sendAfter(t, endpoint, f.engine, "service:bot", "make_thing", args, 0)
	link := regexp.MustCompile(`https://gw\.example/approve/[^"\\ ]+`).FindString(body)
	if status != http.StatusOK || !strings.Contains(body, "APPROVAL_REQUIRED") || link == "" {
		t.Fatalf("the proposal: %d %s; want APPROVAL_REQUIRED with a link", status, body)
	}
	id, err := linkedAction(t, link)
	if err != nil {
		t.Fatal(err)
	}
	f.decide(t, id, boss, true)

	status, body = sendAfter(t, endpoint, f.engine, "service:bot", "make_thing", args, budget*6/10)
	if status != http.StatusOK || !strings.Contains(body, "RATE_LIMITED") || !strings.Contains(body, "too little of its time") {
		t.Errorf("the approved write left with 40 %% of its budget: %d %s; want RATE_LIMITED saying too little time was left", status, body)
	}
	if n := f.runs.Load(); n != 0 {
		t.Errorf("%d runs of the approved write left with too little time reached the ERP; want none", n)
	}
	if a, err := f.store.Get(t.Context(), f.site.ID, id); err != nil || a.Status != approval.Approved {
		t.Errorf("the action after the refusal: %+v, %v; want it still approved", a, err)
	}

	status, body = sendAfter(t, endpoint, f.engine, "service:bot", "make_thing", args, 0)
	if status != http.StatusOK || !strings.Contains(body, `"made":"Widget"`) || f.runs.Load() != 1 {
		t.Errorf("the same approved write with its whole budget: %d %s, %d runs; want it written once", status, body, f.runs.Load())
	}
}
