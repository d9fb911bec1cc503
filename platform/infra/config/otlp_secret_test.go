package config

import (
	"strings"
	"testing"
)

// TestOTLPEndpointProblemQuotesNoCredential: a collector URL may carry a
// credential (a password in its user info, an API key in its query or
// fragment). A refused one is reported without it, also when the URL does
// not parse (a password with a stray "%" or a space).
func TestOTLPEndpointProblemQuotesNoCredential(t *testing.T) {
	for _, tc := range []struct{ value, secret, problem string }{
		{"https://user:pw-S3cret%zz@otel.example:4318", "pw-S3cret", "must be an http or https URL"},
		{"https://user:pw S3cret@otel.example", "S3cret", "must be an http or https URL"},
		{"user:pw-S3cret@otel.example:4318", "pw-S3cret", "must be an http or https URL"},
		{"https://otel.example:4318/v1/traces?api_key=key-S3cret", "key-S3cret", "query"},
		{"https://otel.example:4318/v1/traces#key-S3cret", "key-S3cret", "fragment"},
	} {
		problems := loadProblems(t, validEnv().with("ERPGATE_OTLP_ENDPOINT", tc.value), "")
		assertProblem(t, problems, "ERPGATE_OTLP_ENDPOINT: ", tc.problem)
		if all := strings.Join(problems, "\n"); strings.Contains(all, tc.secret) {
			t.Errorf("%s: the problem quotes the credential: %s", tc.value, all)
		}
	}
}
