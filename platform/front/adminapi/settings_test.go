package adminapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// setting finds name in a settings list answer.
func setting(t *testing.T, list map[string]any, name string) map[string]any {
	t.Helper()
	for _, s := range list["settings"].([]any) {
		if m := s.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("no setting %s in %v", name, list)
	return nil
}

// TestSettingsReadAndWrite changes live settings through the API: typed
// values, refusals in plain words, per-site scope, reset to the default,
// and an audit event with old and new values for each change.
func TestSettingsReadAndWrite(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")

	r := h.call(http.MethodGet, "/api/v1/settings", nil)
	expect(t, r, http.StatusOK, "")
	mr := setting(t, r.JSON(t), "max_records")
	if mr["value"] != float64(1000) || mr["source"] != "default" || mr["default_from"] != "ERPGATE_MAX_RECORDS" {
		t.Errorf("max_records before: %v", mr)
	}

	r = h.call(http.MethodPut, "/api/v1/settings/max_records", map[string]any{"value": 250})
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t); got["value"] != float64(250) || got["source"] != "deployment" || got["updated_at"] == nil {
		t.Errorf("max_records after: %v", got)
	}
	r = h.call(http.MethodPut, "/api/v1/settings/redaction_add", map[string]any{"value": []string{" salary ", "bonus", "salary"}})
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t)["value"].([]any); len(got) != 2 || got[0] != "salary" || got[1] != "bonus" {
		t.Errorf("redaction_add: %v", got)
	}

	for _, bad := range []struct {
		path string
		body any
		want string
	}{
		{"/api/v1/settings/max_records", map[string]any{"value": 0}, "whole number from 1 to 100000"},
		{"/api/v1/settings/max_records", map[string]any{"value": "lots"}, "whole number"},
		{"/api/v1/settings/redaction_add", map[string]any{"value": "salary"}, "array of strings"},
		{"/api/v1/settings/acumatica_canary_inquiry", map[string]any{"value": "../x"}, "generic inquiry"},
		{"/api/v1/settings/read_only", map[string]any{"value": true}, "cannot be set for the whole deployment"},
		{"/api/v1/settings/no_such_setting", map[string]any{"value": 1}, "there is no setting “no_such_setting”"},
		{"/api/v1/sites/acme/settings/user_concurrency", map[string]any{"value": 5}, "cannot be set per site"},
		{"/api/v1/sites/acme/settings/tools", map[string]any{"value": []string{"read", "no_such_tool"}}, "“no_such_tool” is neither a tool of fakeerp sites nor one of the groups read, write, destructive"},
		{"/api/v1/settings/max_records", map[string]any{}, "{\"value\": ...}"},
	} {
		r := h.call(http.MethodPut, bad.path, bad.body)
		expect(t, r, http.StatusBadRequest, "invalid_request")
		if msg := r.errorMessage(t); !strings.Contains(msg, bad.want) {
			t.Errorf("PUT %s %v: %q, want it to say %q", bad.path, bad.body, msg, bad.want)
		}
	}

	r = h.call(http.MethodPut, "/api/v1/sites/acme/settings/tools", map[string]any{"value": []string{"read"}})
	expect(t, r, http.StatusOK, "")
	r = h.call(http.MethodPut, "/api/v1/sites/acme/settings/read_only", map[string]any{"value": true})
	expect(t, r, http.StatusOK, "")
	r = h.call(http.MethodGet, "/api/v1/sites/acme/settings", nil)
	expect(t, r, http.StatusOK, "")
	list := r.JSON(t)
	if ro := setting(t, list, "read_only"); ro["value"] != true || ro["source"] != "site" {
		t.Errorf("site read_only: %v", ro)
	}
	// A site's redaction patterns are its own additions; the deployment's
	// apply as well.
	if ra := setting(t, list, "redaction_add"); ra["source"] != "default" || len(ra["value"].([]any)) != 0 || len(ra["deployment_value"].([]any)) != 2 {
		t.Errorf("the site's redaction_add: %v", ra)
	}
	expect(t, h.call(http.MethodGet, "/api/v1/sites/nowhere/settings", nil), http.StatusNotFound, "not_found")

	r = h.call(http.MethodDelete, "/api/v1/settings/max_records", nil)
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t); got["value"] != float64(1000) || got["source"] != "default" {
		t.Errorf("after reset: %v", got)
	}
	expect(t, h.send(http.MethodPut, "/api/v1/settings/max_records", map[string]any{"value": 5}, ""), http.StatusUnauthorized, "")

	var events []string
	rows, err := h.pool.Query(context.Background(), `SELECT site_slug || ' ' || outcome || ' ' || details::text FROM admin_events WHERE action = 'change_setting' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	rows.Close()
	want := []string{
		` success {"new": 250, "old": 1000, "setting": "max_records"}`,
		` success {"new": ["salary", "bonus"], "old": [], "setting": "redaction_add"}`,
	}
	for i, w := range want {
		if i >= len(events) || events[i] != w {
			t.Fatalf("event %d = %q, want %q (all: %q)", i, events, w, events)
		}
	}
	last := events[len(events)-1]
	if last != ` success {"new": 1000, "old": 250, "reset": true, "setting": "max_records"}` {
		t.Errorf("the reset's event: %q", last)
	}
	refused := 0
	for _, e := range events {
		if strings.Contains(e, " refused ") {
			refused++
		}
	}
	// Every refusal but the body without a value, which never reached
	// the settings.
	if refused != 8 {
		t.Errorf("%d refused changes recorded, want 8: %q", refused, events)
	}
}

// A site's write tools are write tools of its kind: a typo or a group
// name, which would enable nothing while the operator believes writes are
// on, is refused in words, as an unknown tool in the tools setting is.
func TestWriteToolsMustBeWriteToolsOfTheSite(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	for _, value := range [][]string{{"create_sales_ordr"}, {"write"}} {
		r := h.call(http.MethodPut, "/api/v1/sites/acme/settings/write_tools", map[string]any{"value": value})
		if r.Status != http.StatusBadRequest {
			t.Errorf("write_tools %v: HTTP %d, want 400: %s", value, r.Status, r.Body)
			continue
		}
		if msg := r.errorMessage(t); !strings.Contains(msg, "is not a write tool of fakeerp sites") {
			t.Errorf("write_tools %v: %q does not say it is no write tool", value, msg)
		}
	}
	if n := count(t, h, `SELECT count(*) FROM live_settings WHERE name = 'write_tools'`); n != 0 {
		t.Errorf("%d write_tools values stored, want none", n)
	}
	expect(t, h.call(http.MethodPut, "/api/v1/sites/acme/settings/write_tools", map[string]any{"value": []string{}}), http.StatusOK, "")
}

// A site's settings route with no site in it (an empty id, as a script
// with an unset variable sends it) names no site: it is refused like any
// other unknown site, and never changes or resets the deployment's value,
// which every site's calls use. Before, echo matched the empty segment and
// the handler took "no id" for the deployment's route.
func TestSiteSettingsRouteWithoutASiteChangesNothing(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	expect(t, h.call(http.MethodPut, "/api/v1/settings/redaction_add", map[string]any{"value": []string{"salary"}}), http.StatusOK, "")

	expect(t, h.call(http.MethodPut, "/api/v1/sites//settings/redaction_skip", map[string]any{"value": []string{"tax_id"}}), http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodDelete, "/api/v1/sites//settings/redaction_add", nil), http.StatusNotFound, "not_found")

	r := h.call(http.MethodGet, "/api/v1/settings", nil)
	expect(t, r, http.StatusOK, "")
	list := r.JSON(t)
	if skip := setting(t, list, "redaction_skip"); skip["source"] != "default" || len(skip["value"].([]any)) != 0 {
		t.Errorf("the deployment's redaction_skip after PUT /sites//settings: %v", skip)
	}
	if add := setting(t, list, "redaction_add"); add["source"] != "deployment" || len(add["value"].([]any)) != 1 {
		t.Errorf("the deployment's redaction_add after DELETE /sites//settings: %v", add)
	}
	if n := count(t, h, `SELECT count(*) FROM admin_events WHERE action = 'change_setting' AND outcome = 'success'`); n != 1 {
		t.Errorf("%d settings changes recorded as done, want only the deployment's own", n)
	}
}
