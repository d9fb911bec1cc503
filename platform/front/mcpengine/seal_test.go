package mcpengine

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/google/uuid"
)

func testSealers(t testing.TB) (states, sessions *sealer) {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	states, err := newSealer([][]byte{key}, "approval-state")
	if err != nil {
		t.Fatal(err)
	}
	sessions, err = newSealer([][]byte{key}, "capability-session")
	if err != nil {
		t.Fatal(err)
	}
	return states, sessions
}

// Every changed byte of a sealed token, a token of the other kind, and
// one sealed under another key open as nothing.
func TestSealedTokensRefuseTampering(t *testing.T) {
	states, sessions := testSealers(t)
	in := approvalState{Action: uuid.New(), Site: uuid.New(), AuthType: "oauth", Principal: "jane@acme.test", Tool: "make_thing",
		Digest: bytes.Repeat([]byte{7}, 32), Expires: 1_900_000_000}
	token, err := states.seal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out approvalState
	if !states.open(token, &out) || out.Action != in.Action || out.Principal != in.Principal || !bytes.Equal(out.Digest, in.Digest) {
		t.Fatalf("round trip: %+v", out)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(token)
	for i := range raw {
		for _, bit := range []byte{1, 0x80} {
			changed := bytes.Clone(raw)
			changed[i] ^= bit
			if states.open(base64.RawURLEncoding.EncodeToString(changed), &out) {
				t.Fatalf("byte %d changed, and the token still opens", i)
			}
		}
	}
	if states.open(token[:len(token)-1], &out) || states.open("", &out) || states.open("!!", &out) {
		t.Fatal("a cut or malformed token opens")
	}
	var cs capabilitySession
	if sessions.open(token, &cs) {
		t.Fatal("a request state opens as a session id")
	}
	other, _ := testSealers(t)
	if other.open(token, &out) {
		t.Fatal("a token opens under another key")
	}
}

func FuzzSealedOpen(f *testing.F) {
	states, _ := testSealers(f)
	good, _ := states.seal(approvalState{Action: uuid.New()})
	for _, s := range []string{"", good, good[:10], "mcp-session-x", "AAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		var out approvalState
		if states.open(token, &out) && token != good {
			t.Fatalf("a token erpgate did not seal opened: %q", token)
		}
	})
}
