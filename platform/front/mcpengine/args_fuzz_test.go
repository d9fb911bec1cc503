package mcpengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// FuzzValidateArgs: arguments the input schema accepts hold only numbers
// whose exact value fits 4096 bits, as the tools read them with math/big
// (1e-1000000 is within [0, 1e9] but costs tens of milliseconds each time
// it is read); anything else is an INVALID_ARGUMENT with a message.
func FuzzValidateArgs(f *testing.F) {
	for _, seed := range []string{`{"q":1}`, `{"q":2.5,"lines":[1,2e3]}`, `{"q":1e-1000000}`, `{"q":0.5,"lines":[1e-5000]}`, `{"q":-1}`, `{"q":"x"}`, `[]`, `{"q":1e9}`} {
		f.Add([]byte(seed))
	}
	v, err := schema.CompileValidator(schema.Object(
		schema.Prop("q", schema.Number("A quantity.").Min(0).Max(1e9)).Required(),
		schema.Prop("lines", schema.Array(schema.Number("A line's amount."), "Amounts.")),
	), "mem://fuzz-args")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 64<<10 {
			return
		}
		out, err := validateArgs(v, json.RawMessage(raw))
		if err != nil {
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Code != toolerr.InvalidArgument || te.Message == "" {
				t.Fatalf("%q: %v, want INVALID_ARGUMENT", raw, err)
			}
			return
		}
		var doc struct {
			Q     json.Number   `json:"q"`
			Lines []json.Number `json:"lines"`
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return
		}
		for _, n := range append(doc.Lines, doc.Q) {
			if r, ok := new(big.Rat).SetString(string(n)); ok && (r.Num().BitLen() > 4096 || r.Denom().BitLen() > 4096) {
				t.Fatalf("%q accepted with the number %.20s… of %d/%d bits", raw, n, r.Num().BitLen(), r.Denom().BitLen())
			}
		}
	})
}
