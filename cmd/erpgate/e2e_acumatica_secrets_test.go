package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// TestAcumaticaServiceSecretsNeverLogged: an Acumatica service connection
// signs in with a client secret and a password. Saving it with a wrong
// password, calling tools, and calling after the password changed at the
// ERP leave neither the password, the wrong one nor the client secret in
// the logs, the admin API's answers, the tool results, or the audit,
// sign-in and usage rows.
func TestAcumaticaServiceSecretsNeverLogged(t *testing.T) {
	gw := startGateway(t, "", map[string]string{"ERPGATE_LOG_LEVEL": "debug"})
	acu := acumaticatest.NewServer(acumaticatest.Options{InvalidCredentials500: true})
	defer acu.Close()
	svc := acumaticaService(acu.ServiceLogin())
	site, err := registerAcumaticaService(context.Background(), gw.admin, devState{}, svc, "acu", "Test Acumatica", acu.URL)
	if err != nil {
		t.Fatal(err)
	}
	var answers []string
	const wrong = "wrong-Passw0rd-4b9e1c"
	err = gw.admin.do(context.Background(), http.MethodPut, "/sites/"+site.ID+"/connections/api_token",
		map[string]any{"credentials": map[string]string{
			"client_id": svc.ClientID, "client_secret": svc.ClientSecret, "username": svc.Username, "password": wrong,
		}}, nil)
	if err == nil {
		t.Fatal("a wrong password was accepted")
	}
	answers = append(answers, err.Error())

	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	answers = append(answers, mustSucceedText(t, callTool(t, cs, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"})))
	const changed = "changed-Passw0rd-8d2f7a"
	acu.ChangePassword(svc.Username, changed)
	for range 2 {
		r := callTool(t, cs, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"})
		if !r.IsError {
			t.Fatalf("a call after the password changed succeeded: %s", r.Text)
		}
		answers = append(answers, r.Text)
	}

	var audit, usage string
	queryRow(t, gw.DBURL, `SELECT coalesce(string_agg(e::text, E'\n'), '') FROM admin_events e`, nil, &audit)
	queryRow(t, gw.DBURL, `SELECT coalesce(string_agg(u::text, E'\n'), '') FROM usage_events u`, nil, &usage)
	if !strings.Contains(audit, "refused") {
		t.Fatalf("no refused connection in the audit rows:\n%s", audit)
	}
	texts := map[string]string{"logs": gw.Logs.String(), "admin_events": audit, "usage_events": usage, "answers": strings.Join(answers, "\n")}
	for what, s := range map[string]string{"password": svc.Password, "wrong password": wrong, "changed password": changed, "client secret": svc.ClientSecret, "service token": site.ServiceToken} {
		for where, text := range texts {
			if strings.Contains(text, s) {
				t.Errorf("the %s contain the %s", where, what)
			}
		}
	}
}

func mustSucceedText(t *testing.T, r toolResult) string {
	t.Helper()
	if r.IsError {
		t.Fatalf("call failed: %s", r.Text)
	}
	return r.Text
}
