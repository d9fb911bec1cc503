package secrets

import "encoding/base64"

// base64Encodings are tried in order when decoding operator-supplied keys,
// because `openssl rand -base64 32` and URL-safe generators are both common.
var base64Encodings = []*base64.Encoding{
	base64.StdEncoding,
	base64.RawStdEncoding,
	base64.URLEncoding,
	base64.RawURLEncoding,
}

// decodeBase64 decodes s in any of the accepted encodings. It reports only
// success, so no decoder error (which could quote input) escapes.
func decodeBase64(s string) ([]byte, bool) {
	for _, enc := range base64Encodings {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}
