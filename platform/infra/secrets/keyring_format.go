package secrets

import (
	"fmt"
	"strings"
)

// String describes the keyring by key ids only.
func (k *Keyring) String() string {
	if k == nil || len(k.ids) == 0 {
		return "secrets.Keyring{}"
	}
	return fmt.Sprintf("secrets.Keyring{primary: %s, keys: [%s]}", k.ids[0], strings.Join(k.ids, " "))
}

// GoString is String, so %#v cannot dump the expanded AES keys.
func (k *Keyring) GoString() string { return k.String() }

// Format prints String for every verb. Without it, a verb such as %x or %d
// applied to a struct holding a *Keyring would walk the cipher state.
func (k *Keyring) Format(f fmt.State, _ rune) {
	_, _ = f.Write([]byte(k.String()))
}
