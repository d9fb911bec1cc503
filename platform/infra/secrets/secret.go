package secrets

import (
	"fmt"
	"log/slog"
	"strconv"
)

// Redacted is what every formatted, marshalled or logged Secret shows.
const Redacted = "[redacted]"

// Secret is a string that must never be printed or logged: an admin token, a
// database URL with its password, an ERP client secret. Every way of turning
// it into text — fmt with any verb, encoding/json, encoding.TextMarshaler
// users such as YAML, zap.Any, zap.Stringer, zap.Reflect and slog — yields
// "[redacted]". Call Reveal at the single point where the value is really
// needed.
//
// Decoding into a Secret (JSON, YAML) works as for a plain string. One gap
// cannot be closed from here: encoding/json writes map keys of any string
// type verbatim, so never use a Secret as a map key.
type Secret string

// Reveal returns the secret value. Keep what it returns out of logs, errors
// and responses.
func (s Secret) Reveal() string { return string(s) }

// IsSet reports whether the secret is non-empty, for "is set"/"not set" logs.
func (s Secret) IsSet() bool { return s != "" }

// String implements fmt.Stringer; zap.Any and zap.Stringer use it.
func (s Secret) String() string { return Redacted }

// GoString implements fmt.GoStringer for direct callers; fmt itself goes
// through Format.
func (s Secret) GoString() string { return Redacted }

// Format implements fmt.Formatter so that no verb — including %x, %d and %#v,
// which would otherwise bypass String — can show the value. %q quotes the
// placeholder; width and flags are ignored.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		_, _ = f.Write([]byte(strconv.Quote(Redacted)))
		return
	}
	_, _ = f.Write([]byte(Redacted))
}

// MarshalJSON implements json.Marshaler, which zap.Reflect also uses.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText implements encoding.TextMarshaler, used by YAML and other
// text-based encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(Redacted) }
