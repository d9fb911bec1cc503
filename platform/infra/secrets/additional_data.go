package secrets

import "encoding/binary"

// AdditionalData encodes parts as GCM additional data that binds a ciphertext
// to its context — typically site id, connection type and field name — so a
// ciphertext copied to another row or column fails to open.
//
// Each part is written as a 4-byte big-endian length followed by its bytes.
// The encoding is injective: ("ab", "c") and ("a", "bc") differ, as do ()
// and (""). Changing it would make every stored ciphertext unreadable.
func AdditionalData(parts ...string) []byte {
	size := 0
	for _, p := range parts {
		size += 4 + len(p)
	}
	out := make([]byte, 0, size)
	for _, p := range parts {
		out = binary.BigEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out
}
