package mcpengine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/store/approval"
)

// FuzzOutcomeError: the "already used" refusal quotes the stored result
// (the ERP's record, any language) shortened, and stays valid UTF-8.
func FuzzOutcomeError(f *testing.F) {
	f.Add(`{"name":"SAL-ORD-2025-00001","customer":"Société Générale","grand_total":1180}`, 0)
	f.Add(`{"customer":"`+strings.Repeat("é", 600)+`"}`, 1)
	f.Add(`{"customer":"`+strings.Repeat("日本", 400)+`"}`, 2)
	f.Fuzz(func(t *testing.T, result string, pad int) {
		if !json.Valid([]byte(result)) || !utf8.ValidString(result) {
			return // a stored result is JSON the engine wrote
		}
		if pad < 0 {
			pad = -pad
		}
		result = strings.Repeat(" ", pad%8) + result
		a := approval.Action{Status: approval.Executed, Result: json.RawMessage(result), ExecutedAt: time.Unix(1_700_000_000, 0)}
		a.Preview.Summary = "Create a draft sales order"
		err := outcomeError(a, time.Unix(1_700_000_100, 0))
		var te *toolerr.Error
		if !errors.As(err, &te) || te.Code != toolerr.ApprovalInvalid {
			t.Fatalf("outcomeError = %v", err)
		}
		if !utf8.ValidString(te.Message) {
			t.Fatalf("the refusal quoting %q is not valid UTF-8: %q", result, te.Message)
		}
	})
}
