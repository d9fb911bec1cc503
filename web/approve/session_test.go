package approve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// An approval session names an ERP user of the ERP the sign-in was at.
// Once the site is moved to another ERP or tenant, where the same user id
// (Frappe's "Administrator", for one) is another person, it approves
// nothing there.
func TestSessionDoesNotFollowItsSiteToAnotherERP(t *testing.T) {
	kit, err := pagekit.New("https://erpgate.example.com")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	h := &Handler{now: func() time.Time { return now }, sessions: pagekit.UserSession{Kit: kit,
		Signer: pagekit.NewSigner([]byte(strings.Repeat("s", 32))), Cookie: sessionCookie, Purpose: sessionPurpose, Lifetime: SessionLifetime,
		Ends: pagesession.New(pgtest.NewPool(t))}, log: zap.NewNop()}
	site := sites.Site{ID: uuid.New(), Slug: "acme", Kind: "frappe", BaseURL: "https://erp-a.example.com"}
	rec := httptest.NewRecorder()
	if err := h.startSession(rec, httptest.NewRequest(http.MethodGet, "/", nil), site, "Administrator"); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/approve/x", nil)
	for _, c := range rec.Result().Cookies() {
		req.AddCookie(c)
	}
	if user, ok, _ := h.session(req, site); !ok || user != "Administrator" {
		t.Fatalf("the session on its own site: %q, %v", user, ok)
	}
	moved := site
	moved.BaseURL = "https://erp-b.example.com"
	if user, ok, _ := h.session(req, moved); ok {
		t.Errorf("the session on the site moved to another ERP: %q", user)
	}
	retenanted := site
	retenanted.IdentityKey = "othercompany"
	if user, ok, _ := h.session(req, retenanted); ok {
		t.Errorf("the session on the site moved to another tenant: %q", user)
	}
}
