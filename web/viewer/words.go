package viewer

import (
	"sort"
	"strings"

	"github.com/erpgate/erpgate/platform/store/approval"
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
	"create_site":               "Site registered",
	"update_site":               "Site changed",
	"delete_site":               "Site deleted",
	"put_api_connection":        "API credential set",
	"put_oauth_connection":      "OAuth client set",
	"rotate_oauth_secret":       "OAuth client secret replaced",
	"delete_connection":         "Connection removed",
	"issue_service_token":       "Service token issued",
	"revoke_service_token":      "Service token revoked",
	"revoke_person":             "Person's access revoked",
	"register_start":            "Registration started",
	"register_client":           "Registration: OAuth client given",
	"register_proof":            "Registration: administrator check",
	"owner_sign_in":             "Owner's page sign-in",
	"owner_sign_out_everywhere": "Owner's page: signed out everywhere",
	"run_preflight":             "Preflight run",
	"console_sign_in":           "Console sign-in",
	"console_sign_out":          "Console sign-out",
	"change_setting":            "Setting changed",
	// Writes (the approval store).
	"write_proposed":               "Write proposed",
	"write_approved":               "Write approved",
	"write_rejected":               "Write rejected",
	"write_withdrawn":              "Write approval withdrawn",
	"write_executed":               "Write carried out",
	"write_failed":                 "Write refused by the ERP",
	"write_refused":                "Write approval refused",
	"approval_sign_out_everywhere": "Approval pages: signed out everywhere",
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
// (authserver); a write approval's are approval.ReasonWords.
var reasonWords = map[string]string{
	"access_denied":               "access to the ERP denied",
	"access_check_misconfigured":  "the ERP's access check is not set up",
	"code_reused":                 "a sign-in link used twice",
	"consent_declined":            "consent declined",
	"wrong_browser":               "finished in another browser",
	"wrong_callback":              "came back to another site's address",
	"upstream_refresh_token_dead": "the ERP ended the person's sign-in",
	"upstream_token_unreadable":   "the stored ERP sign-in could not be read",
}

// reasonWord is a reason in words. The ERP's own refusals of a sign-in
// are stored as erp_ and the OAuth error the ERP sent.
func reasonWord(reason string) string {
	if w, ok := reasonWords[reason]; ok {
		return w
	}
	if w, ok := approval.ReasonWords[reason]; ok {
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

// codeWords says what a usage event's error code means, from the
// caller's side: the tool error codes (toolerr, docs/architecture.md's
// Errors) and the protocol refusals (docs/operations.md). Operators search
// by the codes, so the pages show each code with these words, not instead
// of it.
var codeWords = map[string]string{
	"INVALID_ARGUMENT":          "the call's arguments were not valid",
	"NOT_FOUND":                 "no such document in the ERP",
	"PERMISSION_DENIED":         "refused by the ERP, or the site does not offer the tool",
	"AUTH_EXPIRED":              "the ERP did not accept the sign-in or credential",
	"RATE_LIMITED":              "refused by a limit on calls",
	"UPSTREAM_TIMEOUT":          "the ERP did not answer in time",
	"UPSTREAM_UNAVAILABLE":      "the ERP could not be reached, or failed",
	"UPSTREAM_INVALID_RESPONSE": "the ERP's answer was empty or unreadable",
	"RESPONSE_TOO_LARGE":        "the answer was too large; the call must ask for less",
	"INTERNAL":                  "erpgate failed; the server log says why",
	"APPROVAL_REQUIRED":         "the write waits for a person's approval",
	"APPROVAL_REJECTED":         "the person rejected or withdrew the change",
	"APPROVAL_EXPIRED":          "the approval ran out, or the document changed",
	"APPROVAL_INVALID":          "not a usable approval for this call",
	"UNKNOWN_TOOL":              "a tool erpgate does not have",
	"METHOD_NOT_FOUND":          "a request erpgate does not serve",
	"HEADER_MISMATCH":           "the request's headers did not match its body",
	"INVALID_PARAMS":            "the request's parameters were not valid",
	"PROTOCOL_ERROR":            "the request did not follow the MCP protocol",
}

// codeOrder is the order the code filter offers them: the tool errors as
// documented, then the protocol refusals.
var codeOrder = []string{
	"INVALID_ARGUMENT", "NOT_FOUND", "PERMISSION_DENIED", "AUTH_EXPIRED", "RATE_LIMITED",
	"UPSTREAM_TIMEOUT", "UPSTREAM_UNAVAILABLE", "UPSTREAM_INVALID_RESPONSE", "RESPONSE_TOO_LARGE", "INTERNAL",
	"APPROVAL_REQUIRED", "APPROVAL_REJECTED", "APPROVAL_EXPIRED", "APPROVAL_INVALID",
	"UNKNOWN_TOOL", "METHOD_NOT_FOUND", "HEADER_MISMATCH", "INVALID_PARAMS", "PROTOCOL_ERROR",
}

// codeWord is what an error code means, or "" for one erpgate has no
// words for.
func codeWord(code string) string { return codeWords[code] }

// codeChoices are the usage page's error code filter: each code with its
// words, valued by the code.
func codeChoices(current string) []option {
	opts := []option{{Value: "", Label: "Any error code", Selected: current == ""}}
	known := false
	for _, c := range codeOrder {
		opts = append(opts, option{Value: c, Label: c + " — " + codeWords[c], Selected: c == current})
		known = known || c == current
	}
	if current != "" && !known {
		opts = append(opts, option{Value: current, Label: current, Selected: true})
	}
	return opts
}

// reasonChoices are the audit's reason filter: the reasons of sign-ins
// and write approvals in words, sorted by the words, valued by the stored
// reason; one from a link or a URL that is not among them (an
// administration refusal's) is offered in words too.
func reasonChoices(current string) []option {
	opts := []option{{Value: "", Label: "Any reason", Selected: current == ""}}
	known := false
	var names []string
	for n := range reasonWords {
		names = append(names, n)
	}
	for n := range approval.ReasonWords {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return reasonWord(names[i]) < reasonWord(names[j]) })
	for _, n := range names {
		opts = append(opts, option{Value: n, Label: reasonWord(n), Selected: n == current})
		known = known || n == current
	}
	if current != "" && !known {
		opts = append(opts, option{Value: current, Label: reasonWord(current), Selected: true})
	}
	return opts
}
