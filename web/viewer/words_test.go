package viewer

import "testing"

// TestApprovalReasonsInWords: the audit shows every reason a write
// approval was refused in words, the engine's own (declined in the AI
// client, a state erpgate did not give, another approver named since) as
// well as the approval store's; before, those three showed as stored.
func TestApprovalReasonsInWords(t *testing.T) {
	for reason, want := range map[string]string{
		"declined":         "declined in the AI client",
		"invalid_state":    "the request's state was not one erpgate gave",
		"approver_changed": "the site named another approver since",
		"wrong_user":       "signed in as another ERP user than the approver",
		"access_denied":    "access to the ERP denied",
	} {
		if got := reasonWord(reason); got != want {
			t.Errorf("reasonWord(%q) = %q, want %q", reason, got, want)
		}
	}
	offered := map[string]bool{}
	for _, o := range reasonChoices("") {
		offered[o.Value] = true
	}
	for _, reason := range []string{"declined", "wrong_user", "access_denied"} {
		if !offered[reason] {
			t.Errorf("the reason filter does not offer %q", reason)
		}
	}
}
