package mcpengine

import (
	"context"
	"sync"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/usage"
)

// Session is what a front door establishes for one HTTP request: who is
// calling, on which site, and how to authorise upstream requests.
type Session struct {
	Site      connector.Site
	Principal connector.Principal
	// Authorizer adds the caller's ERP credentials to upstream requests.
	Authorizer connector.Authorizer
	// ErrorsAsResults delivers tool failures as normal results with
	// {status:"error", ok:false, error:{…}} (X-MCP-Error-Format: result).
	ErrorsAsResults bool
	// MaxRecords is the site's cap on rows per upstream query; 0 means the
	// deployment default. The lower of the two applies.
	MaxRecords int
	// LimitKey identifies the caller for per-user limits, such as
	// "service:<token id>" or "user:<erp user>".
	LimitKey string
}

// requestState travels in the context of one MCP request.
type requestState struct {
	session Session
	id      string
	// slot is the request's admission slot, given back while a tool call
	// waits on the ERP.
	slot *callSlot

	mu        sync.Mutex
	method    string
	tool      string
	outcome   usage.Outcome
	errorCode string
}

type stateKey struct{}

func withState(ctx context.Context, st *requestState) context.Context {
	return context.WithValue(ctx, stateKey{}, st)
}

func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(stateKey{}).(*requestState)
	return st
}

func (st *requestState) setOutcome(o usage.Outcome, code string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.outcome, st.errorCode = o, code
}

func (st *requestState) snapshot() (tool string, o usage.Outcome, code string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.tool, st.outcome, st.errorCode
}
