package database

import (
	"bytes"
	"strings"
)

// StorableText is s as Postgres text holds it: a NUL or a byte that is not
// UTF-8 becomes U+FFFD.
func StorableText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// StorableJSON is raw, as encoding/json writes it, with every escaped NUL
// (\u0000, which jsonb refuses) written as U+FFFD instead. An escaped
// backslash followed by "u0000" is text, and kept.
func StorableJSON(raw []byte) []byte {
	nul := []byte(`\u0000`)
	if !bytes.Contains(raw, nul) {
		return raw
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		switch {
		case raw[i] != '\\' || i+1 == len(raw):
			out = append(out, raw[i])
		case bytes.HasPrefix(raw[i:], nul):
			out = append(out, `\ufffd`...)
			i += len(nul) - 1
		default:
			out = append(out, raw[i], raw[i+1])
			i++
		}
	}
	return out
}
