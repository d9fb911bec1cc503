package secrets

import (
	"bytes"
	"encoding/base64"
	"testing"
)

func TestDeriveKeyIsPerPurposeAndPerPrimaryKey(t *testing.T) {
	spec := func(id string, b byte) string {
		return id + ":" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, KeySize))
	}
	k1, err := ParseKeyring(spec("a", 1) + "," + spec("b", 2))
	if err != nil {
		t.Fatal(err)
	}
	k1again, _ := ParseKeyring(spec("a", 1))
	k2, _ := ParseKeyring(spec("b", 2) + "," + spec("a", 1))
	console := k1.DeriveKey("console")
	if len(console) != KeySize {
		t.Fatalf("derived %d bytes", len(console))
	}
	if !bytes.Equal(console, k1again.DeriveKey("console")) {
		t.Error("the same primary key derived two keys for one purpose")
	}
	if bytes.Equal(console, k1.DeriveKey("owner")) {
		t.Error("two purposes share a key")
	}
	if bytes.Equal(console, k2.DeriveKey("console")) {
		t.Error("another primary key derived the same key")
	}
	if bytes.Equal(console, bytes.Repeat([]byte{1}, KeySize)) {
		t.Error("the derived key is the primary key")
	}
}
