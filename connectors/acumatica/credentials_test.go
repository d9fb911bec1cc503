package acumatica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// acumaticaInvalidCredentials is PXLogin's own sentence, which the model
// and the operator are shown.
const acumaticaInvalidCredentials = "Invalid credentials. Please try again."

func (h *harness) tokenRequests() int {
	return len(h.grantsOf("password")) + len(h.grantsOf("refresh_token"))
}

// Issue 15 item 7: Acumatica answers a call whose user's credentials no
// longer sign in with HTTP 500 and a PXException "Error: Invalid
// credentials. Please try again.". That is an authentication failure, not
// an outage: AUTH_EXPIRED (never retried) with Acumatica's message.
func TestInvalidCredentialsOnACallIsAuthExpired(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{InvalidCredentials500: true}})
	args := map[string]any{"CurrencyID": "USD"}
	h.mustRun(kindFull, "acumatica_get_currency", args)
	h.mustRun(kindService, "acumatica_get_currency", args)
	h.fields = h.serviceFields()
	currency := "/entity/Default/24.200.001/Currency"

	h.sim.ChangePassword(h.sim.User(acumaticatest.RoleFull).Username, "changed-P@ss2")
	before := h.sim.RequestCount(currency)
	_, err := h.run(kindFull, "acumatica_get_currency", args)
	te := wantCode(t, err, toolerr.AuthExpired, "a signed-in user whose password changed")
	if !strings.Contains(te.Message, acumaticaInvalidCredentials) || !strings.Contains(te.Message, "sign in again") {
		t.Errorf("message = %s", te.Message)
	}
	if te.Retryable() {
		t.Error("AUTH_EXPIRED is retryable")
	}
	if n := h.sim.RequestCount(currency) - before; n != 1 {
		t.Errorf("the refused call was sent %d times, want 1", n)
	}

	// A service connection tries one fresh sign-in (the session may have
	// been ended by an administrator), which the changed password refuses.
	h.sim.ChangePassword(h.sim.User(acumaticatest.RoleService).Username, "changed-P@ss2")
	before, tokens := h.sim.RequestCount(currency), h.tokenRequests()
	_, err = h.run(kindService, "acumatica_get_currency", args)
	te = wantCode(t, err, toolerr.AuthExpired, "a service connection whose password changed")
	if !strings.Contains(te.Message, acumaticaInvalidCredentials) || !strings.Contains(te.Message, "operator") {
		t.Errorf("message = %s", te.Message)
	}
	if n := h.sim.RequestCount(currency) - before; n != 1 {
		t.Errorf("the refused call was sent %d times, want 1", n)
	}
	if n := h.tokenRequests() - tokens; n > 2 {
		t.Errorf("%d token requests after the refusal, want at most a refresh and a password grant", n)
	}
}

// Signing the service user in again during a call, when the token
// endpoint answers the 500 PXException: AUTH_EXPIRED with Acumatica's
// message after one refresh and one password grant, not an outage after
// four attempts.
func TestInvalidCredentialsWhenSigningInAgain(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{InvalidCredentials500: true}})
	args := map[string]any{"CurrencyID": "USD"}
	h.mustRun(kindService, "acumatica_get_currency", args)
	h.fields = h.serviceFields()
	h.sim.ChangePassword(h.sim.User(acumaticatest.RoleService).Username, "changed-P@ss2")
	h.sim.ExpireTokens()
	tokens := h.tokenRequests()
	_, err := h.run(kindService, "acumatica_get_currency", args)
	te := wantCode(t, err, toolerr.AuthExpired, "sign-in refused with a 500 PXException")
	if !strings.Contains(te.Message, acumaticaInvalidCredentials) || !strings.Contains(te.Message, h.sim.User(acumaticatest.RoleService).Username) {
		t.Errorf("message = %s", te.Message)
	}
	if n := h.tokenRequests() - tokens; n != 2 {
		t.Errorf("%d token requests, want 2 (the refresh, then the password grant)", n)
	}
}

// Saving a service connection with a wrong password, when the token
// endpoint answers the 500 PXException: a rejected credential (the admin
// API's 422 credential_rejected), with Acumatica's message.
func TestVerifyAPICredentialInvalidCredentials500(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{InvalidCredentials500: true}})
	bad := h.serviceFields()
	bad["password"] = secrets.Secret("wrong-password-1")
	auth, err := h.conn.APIAuthorizer(h.site, bad)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.conn.VerifyAPICredential(context.Background(), h.site, h.out.Client(h.site, auth))
	te := wantCode(t, err, toolerr.AuthExpired, "wrong password answered with a 500 PXException")
	if !strings.Contains(te.Message, acumaticaInvalidCredentials) {
		t.Errorf("message = %s", te.Message)
	}
	if n := len(h.grantsOf("password")); n != 1 {
		t.Errorf("%d password grants, want 1", n)
	}
}

// A signed-in user's refresh refused with the 500 PXException is a dead
// grant (the user signs in again), not a passing outage.
func TestRefreshRefusedForInvalidCredentialsIsDead(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{InvalidCredentials500: true}})
	u := h.sim.User(acumaticatest.RoleFull)
	client := connector.OAuthClient{ID: acumaticatest.DefaultServiceClientGUID + "@" + h.sim.Tenant(), Secret: acumaticatest.DefaultServiceSecret}
	tok, err := passwordGrant(context.Background(), h.site, serviceCredential{client: client, username: u.Username, password: secrets.Secret(u.Password)}, h.out.Client(h.site, nil))
	if err != nil || !tok.RefreshToken.IsSet() {
		t.Fatalf("sign in: %v", err)
	}
	h.sim.ChangePassword(u.Username, "changed-P@ss2")
	_, err = OAuth{}.RefreshToken(context.Background(), h.site, client, h.out.Client(h.site, nil), tok.RefreshToken)
	if !errors.Is(err, connector.ErrRefreshTokenDead) || !strings.Contains(err.Error(), acumaticaInvalidCredentials) {
		t.Fatalf("refresh after the password changed: %v, want ErrRefreshTokenDead with Acumatica's message", err)
	}
}

// parseFailure reads any body without panicking; a credentials refusal is
// only ever a 5xx, and its message is one bounded line without a stack
// trace.
func FuzzParseFailure(f *testing.F) {
	f.Add(500, []byte(`{"message":"An error has occurred.","exceptionMessage":"Error: Invalid credentials. Please try again.","exceptionType":"PX.Data.PXException","stackTrace":"   at PX.Data.PXLogin.LoginUser(String& userName, String password)"}`))
	f.Add(500, []byte(`{"message":"Invalid credentials"}`))
	f.Add(400, []byte(`{"error":"invalid_grant","error_description":"invalid_username_or_password"}`))
	f.Add(500, []byte(`{"error":{"code":"","message":"invalid credentials\r\n   at X"}}`))
	f.Add(502, []byte(`<html>Invalid credentials</html>`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		fl := parseFailure(response{status: status, body: body, header: http.Header{}}, true)
		detail, refused := credentialsRefused(status, body)
		if refused != (fl.kind == failCredentials) {
			t.Fatalf("credentialsRefused = %v but kind = %v", refused, fl.kind)
		}
		if refused && status < 500 {
			t.Fatalf("a credentials refusal with HTTP %d", status)
		}
		if strings.Contains(detail, "   at ") || strings.ContainsAny(detail, "\r\n") || utf8.RuneCountInString(detail) > 301 {
			t.Fatalf("detail %q is not one bounded line", detail)
		}
	})
}

// Saving a connection again after its password changed on the ERP, while
// a token from before is still kept: the refused token is dropped and the
// fresh sign-in's refusal is reported.
func TestVerifyAPICredentialAfterThePasswordChanged(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{InvalidCredentials500: true}})
	fields := h.serviceFields()
	verify := func() error {
		auth, err := h.conn.APIAuthorizer(h.site, fields)
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.conn.VerifyAPICredential(context.Background(), h.site, h.out.Client(h.site, auth))
		return err
	}
	if err := verify(); err != nil {
		t.Fatal(err)
	}
	h.sim.ChangePassword(h.sim.User(acumaticatest.RoleService).Username, "changed-P@ss2")
	te := wantCode(t, verify(), toolerr.AuthExpired, "verify with the old password and a kept token")
	if !strings.Contains(te.Message, "refused to sign in") || !strings.Contains(te.Message, acumaticaInvalidCredentials) {
		t.Errorf("message = %s", te.Message)
	}
	if n := len(h.grantsOf("password")); n != 2 {
		t.Errorf("%d password grants, want 2 (the first save, then the fresh sign-in)", n)
	}
}

// A service connection whose password no longer signs in is not tried
// again on every call: a bot calling in a loop would otherwise send the
// ERP a failed sign-in per call (a storm of refusals that can lock the API
// user out). The refusal is told to the calls that follow without asking
// the ERP; a corrected credential (another fingerprint) signs in at once.
func TestARefusedServiceSignInIsNotRepeatedOnEveryCall(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	args := map[string]any{"CurrencyID": "USD"}
	h.mustRun(kindService, "acumatica_get_currency", args)
	h.fields = h.serviceFields()
	h.sim.ChangePassword(h.sim.User(acumaticatest.RoleService).Username, "changed-P@ss2")
	h.sim.ExpireTokens()
	before := h.tokenRequests()
	for i := range 5 {
		_, err := h.run(kindService, "acumatica_get_currency", args)
		wantCode(t, err, toolerr.AuthExpired, fmt.Sprintf("call %d with the old password", i+1))
	}
	if n := h.tokenRequests() - before; n > 2 {
		t.Errorf("5 calls with a refused password made %d token requests, want at most 2 (one refresh, one password grant)", n)
	}
	h.fields = nil // the operator saves the new password
	h.mustRun(kindService, "acumatica_get_currency", args)
}

// TestVerifyAPICredentialQuotesNoToken: an Acumatica (or a proxy in front
// of it) that refuses the verification request with the words of a
// refused sign-in and quotes the token the request carried, without the
// "Bearer" before it that the later redaction of error text looks for.
// The refusal is shown to the operator and stored in the audit event; the
// API user's access token must be in neither.
func TestVerifyAPICredentialQuotesNoToken(t *testing.T) {
	const accessToken = "eyJhbGciOiJSUzI1NiJ9.access-token-of-the-api-user.c2lnbmF0dXJl"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/identity/connect/token" {
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": accessToken, "token_type": "Bearer", "expires_in": 3600})
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]any{"exceptionType": "PX.Data.PXException",
			"exceptionMessage": "Error: Invalid credentials. Please try again. (" + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + ")"})
	}))
	defer srv.Close()
	out := outbound.NewFactory(outbound.DefaultOptions())
	conn := New(Options{HTTPClient: out.Client})
	base, _ := url.Parse(srv.URL)
	site := connector.Site{ID: uuid.New(), Slug: "demo", Kind: Kind, BaseURL: base, Settings: json.RawMessage(`{"tenant":"Demo"}`)}
	auth, err := conn.APIAuthorizer(site, map[string]secrets.Secret{"client_id": "cid@Demo", "client_secret": "client-secret-1",
		"username": "api-user", "password": "password-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.VerifyAPICredential(context.Background(), site, out.Client(site, auth))
	te := wantCode(t, err, toolerr.AuthExpired, "verification refused with the token quoted")
	if strings.Contains(te.Message, "access-token-of-the-api-user") {
		t.Errorf("the refusal quotes the access token: %s", te.Message)
	}
	if !strings.Contains(te.Message, "refused its credentials") {
		t.Errorf("the refusal no longer says what happened: %s", te.Message)
	}
}
