package viewer

import (
	"sort"
	"strings"
)

// The audit stores what happened by name (sign_in, create_site,
// console_sign_in), who acted by kind (operator, erp_admin) and why a
// sign-in was refused by code (access_denied). The pages show them in
// words; the filters and the CSV keep the stored names, so a link from a
// row and the admin API select the same events.

// eventWords are the sign-in events (authserver/storage) and the
// administration actions (siteadmin, the approval store) in words.
var eventWords = map[string]string{
	// Sign-in.
	"sign_in":        "Sign-in",
	"consent":        "Consent given",
	"login_denied":   "Sign-in refused",
	"grants_revoked": "Sign-in ended by erpgate",
	// Site administration (siteadmin).
	"create_site":          "Site registered",
	"update_site":          "Site changed",
	"delete_site":          "Site deleted",
	"put_api_connection":   "API credential set",
	"put_oauth_connection": "OAuth client set",
	"rotate_oauth_secret":  "OAuth client secret replaced",
	"delete_connection":    "Connection removed",
	"issue_service_token":  "Service token issued",
	"revoke_service_token": "Service token revoked",
	"revoke_person":        "Person's access revoked",
	"register_start":       "Registration started",
	"register_client":      "Registration: OAuth client given",
	"register_proof":       "Registration: administrator check",
	"owner_sign_in":        "Owner's page sign-in",
	"run_preflight":        "Preflight run",
	"console_sign_in":      "Console sign-in",
	"console_sign_out":     "Console sign-out",
	"change_setting":       "Setting changed",
	// Writes (the approval store).
	"write_proposed":  "Write proposed",
	"write_approved":  "Write approved",
	"write_rejected":  "Write rejected",
	"write_withdrawn": "Write approval withdrawn",
	"write_executed":  "Write carried out",
	"write_failed":    "Write refused by the ERP",
	"write_refused":   "Write approval refused",
}

// eventWord is an event or action in words; one erpgate does not know
// (from a newer version) is shown with its underscores as spaces.
func eventWord(name string) string {
	if w, ok := eventWords[name]; ok {
		return w
	}
	return unknownName(name)
}

// eventChoices are the audit's event filter: every event and action in
// words, sorted by the words, valued by the stored name.
func eventChoices(current string) []option {
	opts := []option{{Value: "", Label: "Any event or action", Selected: current == ""}}
	known := false
	var names []string
	for n := range eventWords {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return eventWords[names[i]] < eventWords[names[j]] })
	for _, n := range names {
		opts = append(opts, option{Value: n, Label: eventWords[n], Selected: n == current})
		known = known || n == current
	}
	if current != "" && !known {
		opts = append(opts, option{Value: current, Label: unknownName(current), Selected: true})
	}
	return opts
}

// reasonWords are the reasons a sign-in was refused or ended
// (authserver) and a write approval refused (the approval store).
var reasonWords = map[string]string{
	"access_denied":               "access to the ERP denied",
	"access_check_misconfigured":  "the ERP's access check is not set up",
	"code_reused":                 "a sign-in link used twice",
	"consent_declined":            "consent declined",
	"wrong_browser":               "finished in another browser",
	"wrong_callback":              "came back to another site's address",
	"upstream_refresh_token_dead": "the ERP ended the person's sign-in",
	"upstream_token_unreadable":   "the stored ERP sign-in could not be read",
	"wrong_user":                  "signed in as another ERP user than the approver",
	"already_decided":             "already approved or rejected",
	"expired":                     "expired",
	"not_approved":                "not approved yet",
	"rejected":                    "rejected",
	"already_used":                "already used",
	"mismatch":                    "for another caller, tool or arguments",
	"other_client":                "proposed through another AI client",
	"withdrawn":                   "approval withdrawn",
	"not_found":                   "no such approval",
}

// reasonWord is a reason in words. The ERP's own refusals of a sign-in
// are stored as erp_ and the OAuth error the ERP sent.
func reasonWord(reason string) string {
	if w, ok := reasonWords[reason]; ok {
		return w
	}
	if code, ok := strings.CutPrefix(reason, "erp_"); ok && code != "" && !strings.ContainsAny(code, " :") {
		return "the ERP refused the sign-in (" + strings.ReplaceAll(code, "_", " ") + ")"
	}
	// An administration refusal stored before refusals kept a sentence
	// for people: the admin API's kind, a colon and its message.
	if kind, msg, ok := strings.Cut(reason, ": "); ok && !strings.Contains(kind, " ") {
		return msg
	}
	if reason == "internal" {
		return "erpgate failed; the server log says why"
	}
	return unknownName(reason)
}

// actorWords says who acted: the kind of actor, and the name that goes
// with it.
func actorWords(kind, name string) string {
	switch kind {
	case "":
		return ""
	case "operator":
		switch {
		case name == "admin_token":
			return "operator, with the admin token"
		case name == "console_sign_in":
			// A refused sign-in: nobody is known yet.
			return "someone at the console's sign-in"
		case strings.HasPrefix(name, "console_session:"):
			return "operator, in console session " + strings.TrimPrefix(name, "console_session:")
		}
		return withName("operator", name)
	case "erp_admin":
		return withName("ERP administrator", name)
	case "registrant":
		return withName("registration", name)
	case "erp_user":
		return withName("ERP user", name)
	case "mcp_client":
		return withName("MCP client", name)
	}
	return withName(unknownName(kind), name)
}

func withName(who, name string) string {
	if name == "" {
		return who
	}
	return who + " " + name
}

// authWords is how a call authenticated, shown for a call with no ERP
// user.
func authWords(auth string) string {
	switch auth {
	case "service_token":
		return "service token"
	case "oauth":
		return "signed-in person"
	}
	return unknownName(auth)
}

// unknownName is a stored name erpgate has no words for, readable.
func unknownName(name string) string {
	return strings.ReplaceAll(name, "_", " ")
}
