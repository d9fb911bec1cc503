package mcpengine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestApprovalLinksAreNotLogged: an approval link goes to the client that
// asked (as APPROVAL_REQUIRED's message and approval_url, a -32042
// elicitation or an input request), never into the log: its check value
// lets the link pass the page's bound on links that lead nowhere. The
// refusal is still logged, by its code.
func TestApprovalLinksAreNotLogged(t *testing.T) {
	f := newWriteFixture(t)
	var mu sync.Mutex
	var links []string
	elicit := func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		links = append(links, req.Params.URL)
		mu.Unlock()
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}

	// A client that declares no URL elicitation: APPROVAL_REQUIRED.
	res, m := call(t, connect(t, f.person(t, jane), "", nil), "make_thing", map[string]any{"name": "Plain", "qty": 1})
	approvalOf(t, res, m)
	link, _ := m["error"].(map[string]any)["approval_url"].(string)
	links = append(links, link)
	// One before 2026-07-28 that declares it: -32042.
	_, err := connect(t, f.person(t, jane), "2025-11-25", elicit).CallTool(context.Background(),
		&sdk.CallToolParams{Name: "make_thing", Arguments: map[string]any{"name": "Elicited", "qty": 1}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeURLElicitationRequired {
		t.Fatalf("want -32042, got %v", err)
	}
	if l := strings.Index(string(rpcErr.Data), publicBase+"/approve/"); l >= 0 {
		rest := string(rpcErr.Data)[l:]
		links = append(links, rest[:strings.IndexByte(rest, '"')])
	}
	// A 2026-07-28 client that declares it: an input request.
	_, _ = connect(t, f.person(t, jane), "", elicit).CallTool(context.Background(),
		&sdk.CallToolParams{Name: "make_thing", Arguments: map[string]any{"name": "Input", "qty": 1}})

	mu.Lock()
	defer mu.Unlock()
	if len(links) != 3 {
		t.Fatalf("the clients got %d approval links, want 3: %q", len(links), links)
	}
	for _, link := range links {
		if _, err := linkedAction(t, link); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.logs.FilterMessage("tool call failed").FilterFieldKey("error_code").Len(); n == 0 {
		t.Error("the APPROVAL_REQUIRED refusal was not logged")
	}
	for _, e := range f.logs.All() {
		line := e.Message + " " + fmt.Sprint(e.ContextMap())
		for _, link := range links {
			ref := link[strings.LastIndexByte(link, '/')+1:]
			_, check, _ := strings.Cut(ref, ".")
			if strings.Contains(line, ref) || strings.Contains(line, check) {
				t.Errorf("a log line carries the approval link %s: %.400s", link, line)
			}
		}
	}
}
