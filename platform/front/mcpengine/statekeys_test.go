package mcpengine

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// replica is another engine on the fixture's approval store, ERP and usage
// sink, as a replica with the state keys keys (the keyring's
// DeriveKeys(StateKeyPurpose), its first key first): its MCP endpoint as
// Jane through client-1.
func (f *writeFixture) replica(t *testing.T, keys ...[]byte) string {
	t.Helper()
	reg := connector.NewRegistry()
	reg.MustRegister(writeERP{runs: f.runs, previews: f.previews})
	e, err := New(Options{Registry: reg, Outbound: outbound.NewFactory(outbound.DefaultOptions()), Usage: f.sink, Budget: 10 * time.Second,
		Logger: zap.NewNop(), Approvals: f.store, StateKeys: keys, PublicBaseURL: publicBase + "/", LinkKey: testLinkKey})
	if err != nil {
		t.Fatal(err)
	}
	e.SetLive(Live{Sites: map[uuid.UUID]SiteLive{f.site.ID: {WriteTools: []string{"make_thing", "drop_thing"}}}})
	s := Session{Site: f.site, Principal: connector.Principal{AuthType: "oauth", Subject: jane}, ClientID: "client-1", LimitKey: "user:" + jane}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.ServeMCP(w, r, s) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

func randomKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// rotationSteps are the replicas a token meets through a key rotation
// (docs/operations.md): sealed by a replica with the keys sealBy, read
// back by one with openBy. While its key is listed, second or not, it
// opens; once that key is dropped it opens as nothing.
func rotationSteps(t *testing.T) []struct {
	name           string
	sealBy, openBy [][]byte
	opens          bool
} {
	k1, k2 := randomKey(t), randomKey(t)
	return []struct {
		name           string
		sealBy, openBy [][]byte
		opens          bool
	}{
		{"sealed before the rotation, read with k1 listed second", [][]byte{k1}, [][]byte{k2, k1}, true},
		{"sealed with k1 listed first, read with k2 first (step 3 half done)", [][]byte{k1, k2}, [][]byte{k2, k1}, true},
		{"sealed with k2 first, read with k1 first (step 3 half done)", [][]byte{k2, k1}, [][]byte{k1, k2}, true},
		{"sealed under k1, read once k1 is dropped", [][]byte{k1}, [][]byte{k2}, false},
	}
}

// A 2026-07-28 approval's request state sealed by one replica resumes the
// approved write on another whose keys still list the key it was sealed
// under, whatever their order: through a key rotation's rolling deploys,
// and after them while the old key is listed. Under a key no longer
// listed it is refused as one erpgate did not issue, and nothing is
// written.
func TestRequestStatesOpenThroughAKeyRotation(t *testing.T) {
	f := newWriteFixture(t)
	meta := `"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `","` +
		mcp.MetaKeyClientCapabilities + `":{"elicitation":{"url":{}}}}`
	callWith := func(endpoint, args, extra string) map[string]any {
		t.Helper()
		resp, body := postModern(t, endpoint, "tools/call", `{"name":"make_thing","arguments":`+args+extra+`,`+meta+`}`,
			map[string]string{mcp.HeaderName: "make_thing"})
		return decodeReply(t, resp, body)
	}
	for i, step := range rotationSteps(t) {
		args := `{"name":"Widget ` + string(rune('A'+i)) + `"}`
		r, _ := callWith(f.replica(t, step.sealBy...), args, "")["result"].(map[string]any)
		state, _ := r["requestState"].(string)
		in, _ := r["inputRequests"].(map[string]any)["approval"].(map[string]any)
		p, _ := in["params"].(map[string]any)
		id, _ := uuid.Parse(p["elicitationId"].(string))
		if r["resultType"] != "input_required" || state == "" || id == uuid.Nil {
			t.Fatalf("%s: the proposal: %v", step.name, r)
		}
		f.decide(t, id, jane, true)
		before := f.runs.Load()
		reply := structured(callWith(f.replica(t, step.openBy...), args, `,"inputResponses":{"approval":{"action":"accept"}},"requestState":"`+state+`"`))
		wrote := f.runs.Load() - before
		switch {
		case step.opens && (errCode(reply) != "" || wrote != 1):
			t.Errorf("%s: %v, %d writes; want the approved write", step.name, reply, wrote)
		case !step.opens && (errCode(reply) != "APPROVAL_INVALID" || wrote != 0):
			t.Errorf("%s: %v, %d writes; want APPROVAL_INVALID and no write", step.name, reply, wrote)
		}
	}
}

// An earlier protocol's capability session id issued by one replica says
// what its client declared on another whose keys still list the key it
// was sealed under, whatever their order: a client that declared URL
// elicitation is asked by -32042 there too. Under a key no longer listed
// the id says nothing, and the client is asked by tool error.
func TestCapabilitySessionsOpenThroughAKeyRotation(t *testing.T) {
	f := newWriteFixture(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"x","version":"1"},"capabilities":{"elicitation":{"url":{}}}}}`
	for i, step := range rotationSteps(t) {
		resp, _ := rawPost(t, f.replica(t, step.sealBy...), "", init)
		session := resp.Header.Get(HeaderSessionID)
		if session == "" {
			t.Fatalf("%s: initialize issued no session id", step.name)
		}
		call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"make_thing","arguments":{"name":"Gadget ` + string(rune('A'+i)) + `"}}}`
		_, m := rawPost(t, f.replica(t, step.openBy...), session, call)
		e, _ := m["error"].(map[string]any)
		asked := e != nil && e["code"] == json.Number("-32042")
		switch {
		case step.opens && !asked:
			t.Errorf("%s: %v; want -32042", step.name, m)
		case !step.opens && errCode(structured(m)) != "APPROVAL_REQUIRED":
			t.Errorf("%s: %v; want the tool error APPROVAL_REQUIRED", step.name, m)
		}
	}
	if n := f.runs.Load(); n != 0 {
		t.Fatalf("%d writes, want none", n)
	}
}
