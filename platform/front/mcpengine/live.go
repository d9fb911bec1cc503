package mcpengine

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/redact"
)

// Live is what the operator may change while the engine runs
// (platform/store/livesettings): the row cap, the deployment's redaction rules,
// and per site its own row cap and redaction rules, the tools it offers and
// its read-only switch. SetLive puts it in force for the next call.
type Live struct {
	MaxRecords int
	Redaction  redact.Rules
	Sites      map[uuid.UUID]SiteLive
}

// SiteLive is one site's live settings.
type SiteLive struct {
	// MaxRecords is the site's own cap on the rows of one upstream query;
	// 0 for none. It only lowers the deployment's: the lower applies.
	MaxRecords int
	// Redaction adds to the deployment's rules.
	Redaction redact.Rules
	// Tools lists the tool names, or the effect groups read, write and
	// destructive, the site offers; empty offers every tool.
	Tools []string
	// ReadOnly offers only tools that read.
	ReadOnly bool
	// WriteTools names the Write and Destructive tools the site enables;
	// empty enables none (writes are off by default). Tools still applies.
	WriteTools []string
	// ServiceWrites lets service tokens propose the enabled writes, each
	// approved by ServiceWriteApprover (an ERP user of the site); both
	// are needed.
	ServiceWrites        bool
	ServiceWriteApprover string
}

// liveState is Live compiled: redactors built, tool lists as sets. Calls
// read it with one atomic load.
type liveState struct {
	// writes is false when the engine has no approval store: no write
	// tool is offered anywhere, whatever the settings.
	writes     bool
	maxRecords int
	redactors  map[string]*redact.Redactor // by kind
	sites      map[uuid.UUID]*siteState
}

type siteState struct {
	maxRecords int                         // 0: the deployment's
	redactors  map[string]*redact.Redactor // by kind; nil: the deployment's
	tools      map[string]bool             // nil: every tool
	readOnly   bool
	// writeTools are the write tools enabled (nil: none); approver is the
	// approver of service-token writes, "" when they are not allowed.
	writeTools map[string]bool
	approver   string
}

// SetLive puts l in force. It builds the redactors once, so calls pay
// nothing for it.
func (e *Engine) SetLive(l Live) {
	if l.MaxRecords <= 0 {
		l.MaxRecords = e.opts.MaxRecords
	}
	ls := &liveState{writes: e.opts.Approvals != nil, maxRecords: l.MaxRecords, redactors: map[string]*redact.Redactor{}, sites: map[uuid.UUID]*siteState{}}
	for kind := range e.kinds {
		ls.redactors[kind] = redact.New(l.Redaction.Merge(redact.Rules{Exempt: e.exempt[kind]}))
	}
	for id, s := range l.Sites {
		ss := &siteState{readOnly: s.ReadOnly, maxRecords: s.MaxRecords}
		if len(s.WriteTools) > 0 {
			ss.writeTools = map[string]bool{}
			for _, t := range s.WriteTools {
				ss.writeTools[t] = true
			}
		}
		if s.ServiceWrites {
			ss.approver = s.ServiceWriteApprover
		}
		if len(s.Redaction.Add) > 0 || len(s.Redaction.Skip) > 0 {
			ss.redactors = map[string]*redact.Redactor{}
			for kind := range e.kinds {
				ss.redactors[kind] = redact.New(l.Redaction.Merge(s.Redaction).Merge(redact.Rules{Exempt: e.exempt[kind]}))
			}
		}
		if len(s.Tools) > 0 {
			ss.tools = map[string]bool{}
			for _, t := range s.Tools {
				ss.tools[t] = true
			}
		}
		ls.sites[id] = ss
	}
	e.live.Store(ls)
}

// maxRecordsOf is the cap on the rows of one upstream query on site: the
// deployment's, or the site's own where it is lower (a site's only lowers
// it).
func (ls *liveState) maxRecordsOf(site uuid.UUID) int {
	if ss := ls.sites[site]; ss != nil && ss.maxRecords > 0 && ss.maxRecords < ls.maxRecords {
		return ss.maxRecords
	}
	return ls.maxRecords
}

// redactor is the call's redactor: its site's, or the deployment's.
func (e *Engine) redactor(st *requestState, ct *compiledTool) *redact.Redactor {
	ls := e.live.Load()
	if ss := ls.sites[st.session.Site.ID]; ss != nil && ss.redactors != nil {
		return ss.redactors[ct.kind]
	}
	return ls.redactors[ct.kind]
}

// offered reports whether site offers tool, and if not, why, in a
// sentence for the caller.
func (ls *liveState) offered(site uuid.UUID, t connector.Tool) (bool, string) {
	ss := ls.sites[site]
	if t.Effect != connector.Read && (!ls.writes || ss == nil || !ss.writeTools[t.Name]) {
		return false, ls.writesOff(t)
	}
	if ss == nil {
		return true, ""
	}
	if ss.readOnly && t.Effect != connector.Read {
		return false, "this site is read-only: its operator offers only tools that read, and " + t.Name + " changes data"
	}
	if ss.tools != nil && !ss.tools[t.Name] && !ss.tools[t.Effect.String()] {
		return false, "the operator of this site does not offer the tool " + t.Name + " here"
	}
	return true, ""
}

// writesOff says why a write tool is not offered.
func (ls *liveState) writesOff(t connector.Tool) string {
	if !ls.writes {
		return "this erpgate deployment runs no writes: it has no approval store"
	}
	return "writes are off on this site: its owner or operator must enable the write tool " + t.Name +
		" (setting write_tools) before it can be used, and every write then waits for a person's approval"
}

// refuseUnoffered refuses a call of a tool the site does not offer.
func (e *Engine) refuseUnoffered(st *requestState, ct *compiledTool) error {
	if ok, why := e.live.Load().offered(st.session.Site.ID, ct.tool); !ok {
		return toolerr.New(toolerr.PermissionDenied, "%s", why)
	}
	return nil
}

// serviceMayCall reports whether the caller, if a service token, may call
// tool: a write only when the site lets service tokens write (an approver
// is named), so a service token is offered the read-only catalogue
// otherwise. writeKey refuses such calls too.
func (ls *liveState) serviceMayCall(st *requestState, t connector.Tool) bool {
	if st.session.Principal.AuthType != "service_token" || t.Effect == connector.Read {
		return true
	}
	ss := ls.sites[st.session.Site.ID]
	return ss != nil && ss.approver != ""
}

// filterListed removes from a tools/list result the tools the caller's
// site does not offer.
func (e *Engine) filterListed(kind string) func(ctx context.Context, id any, req *mcp.ListToolsRequest, result *mcp.ListToolsResult) {
	return func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, result *mcp.ListToolsResult) {
		st := stateFrom(ctx)
		if st == nil || result == nil {
			return
		}
		ls := e.live.Load()
		ks := e.kinds[kind]
		if ls.sites[st.session.Site.ID] == nil && !ks.writes {
			return
		}
		result.Tools = slices.DeleteFunc(slices.Clone(result.Tools), func(t mcp.Tool) bool {
			ct := ks.tools[t.Name]
			if ct == nil {
				return true
			}
			ok, _ := ls.offered(st.session.Site.ID, ct.tool)
			return !ok || !ls.serviceMayCall(st, ct.tool)
		})
	}
}
