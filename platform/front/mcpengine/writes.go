package mcpengine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/redact"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/usage"
)

// Writes (docs/writes.md). A Write or Destructive tool's call never writes
// at once: the engine proposes it (the connector's Preview, read as the
// caller, stored as a pending action), asks the client to have the person
// approve it on erpgate's page, and runs it only when a later call (the
// retry with the same arguments, or the resumed 2026-07-28 request) finds
// the action approved and wins the claim on it: once, whatever races.
//
// How the engine asks depends on the client:
//   - 2026-07-28 with elicitation.url in the capabilities of _meta: an
//     input_required result with a URL-mode elicitation of the page, and
//     the sealed request state (seal.go) naming the action;
//   - an earlier protocol whose client declared elicitation.url at
//     initialize (carried by the sealed capability session id the engine
//     issued, since erpgate keeps no session): JSON-RPC error -32042;
//   - anyone else: the tool error APPROVAL_REQUIRED with the URL, telling
//     the model to show it and call again with the same arguments.
//
// The approval page (web/approve) decides with approval.Store.Decide; the
// engine only proposes, claims, runs and records.
//
// Choices made here (docs/writes.md has the design):
//   - input_required and -32042 are used only for a client that declared
//     elicitation.url (not merely elicitation): a form-only client could
//     not open the page, and gets APPROVAL_REQUIRED;
//   - of racing retries the loser gets APPROVAL_INVALID "already used" at
//     once (it does not wait for the winner's result);
//   - an outcome that ends an action (rejected, withdrawn, expired,
//     executed, failed) is told to the caller once (Store.Report); the same call
//     then proposes afresh, so a model is never stuck, and a replay never
//     writes. A write still executing is told to every retry and stays
//     open until it expires (outcome unknown: never run again);
//   - a service token's principal is its id (Session.ClientID);
//   - an approval is bound to the client that proposed it (the key holds
//     Session.ClientID): the same person's call through another OAuth
//     client is a proposal of its own;
//   - the capability session id is bound to the site, not the person: it
//     says only what the client can show;
//   - sealed states are sealed under the keyring's primary key and open
//     under any listed key (seal.go), so a key rotation breaks none while
//     its key is listed; once it is dropped, an outstanding request state
//     is invalid (the call proposes afresh) and a session id unreadable
//     (the client is then asked by tool error);
//   - an ask is recorded as usage outcome error APPROVAL_REQUIRED, stage
//     proposed, whichever form it took; a call refused before anything
//     was proposed (invalid arguments, a failed preview) has no stage.

// StateKeyPurpose is the secrets.Keyring.DeriveKeys purpose of
// Options.StateKeys.
const StateKeyPurpose = "approval-state"

// ApprovalURL is the approval page of action id, under the public base URL,
// its id carrying a check value under linkKey (approval.LinkID), so that
// the page lets it pass a source someone else spent with made-up links.
func ApprovalURL(publicBaseURL string, id uuid.UUID, linkKey []byte) string {
	return strings.TrimRight(publicBaseURL, "/") + "/approve/" + approval.LinkID(id, linkKey)
}

// The approval stages a write tool's usage event records.
const (
	StageProposed = "proposed"
	StageExecuted = "executed"
	StageFailed   = "failed"
	StageRefused  = "refused"
)

// inputKey is the key of the approval in an input_required result's
// inputRequests.
const inputKey = "approval"

// askMode is how the engine asks a client for approval.
type askMode int

const (
	askByError    askMode = iota // APPROVAL_REQUIRED tool error
	askByURLError                // -32042 (before 2026-07-28)
	askByInput                   // input_required (2026-07-28)
)

// approvalLink carries the approval URL in an APPROVAL_REQUIRED error, for
// the error envelope's approval_url.
type approvalLink struct{ url string }

func (l *approvalLink) Error() string { return "approval required at " + l.url }

// unknownOutcome marks the error of an approved write that may have been
// made (approval.OutcomeUnknown): it is never told as retryable.
type unknownOutcome struct{ error }

func (u unknownOutcome) Unwrap() error { return u.error }

func (st *requestState) setApproval(stage string) {
	st.mu.Lock()
	st.approval = stage
	st.mu.Unlock()
}

// writeCall is the chain of a Write or Destructive tool's call.
func (e *Engine) writeCall(ctx context.Context, st *requestState, ct *compiledTool, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := e.write(ctx, st, ct, req)
	var required mcp.URLElicitationRequiredError
	if err != nil && !errors.As(err, &required) {
		return e.failure(ctx, st, ct, err), nil
	}
	return res, err
}

func (e *Engine) write(ctx context.Context, st *requestState, ct *compiledTool, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := e.checkArgs(st, ct, req.Params.RawArguments)
	if err != nil {
		return nil, err
	}
	// Arguments that could be read two ways (a repeated member) have no
	// approval: checked on the arguments as sent, since checkArgs (a null
	// member dropped) and plainNumbers rewrite them decoded, keeping the
	// last of two members of the same name.
	if _, err := approval.Digest(req.Params.RawArguments); err != nil {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments cannot be read one way only (a repeated name?)")
	}
	if args, err = plainNumbers(args); err != nil {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments are not valid JSON")
	}
	if field, ok := nulField(args); ok {
		return nil, toolerr.New(toolerr.InvalidArgument,
			"%s holds a NUL character (U+0000), which the approval page cannot show as what the ERP would get; nothing was proposed. Send the text without it", field)
	}
	if arg, ok := hiddenArgument(e.redactor(st, ct), args); ok {
		return nil, toolerr.New(toolerr.InvalidArgument,
			"%s holds a value erpgate's redaction rules hide (a card number, an IBAN, or a field this site redacts), on the approval page too, so the person could not see what the ERP would get; nothing was proposed. Leave it out of the change", arg)
	}
	key, approver, err := e.writeKey(st, ct, args)
	if err != nil {
		st.setApproval(StageRefused)
		return nil, err
	}
	ctx, end, err := e.bounded(ctx, st, ct)
	if err != nil {
		return nil, err
	}
	defer end.done()
	store := e.opts.Approvals
	mode := e.askMode(ctx, st)

	var (
		a     approval.Action
		found bool
	)
	if state := req.Params.RequestState; state != "" {
		// The 2026-07-28 retry: the state names the action, and must
		// have been issued for exactly this call.
		var k approvalState
		ok := e.states.open(state, &k)
		otherClient := false
		if ok {
			var sk approval.Key
			sk, ok = k.key()
			// A state sealed before approvals were bound to their client
			// names none: the action's row says whose it is (below).
			otherClient = ok && k.Client != "" && sk.ClientID != key.ClientID
			sk.ClientID = key.ClientID
			ok = ok && sk == key && !otherClient
		}
		if otherClient {
			st.setApproval(StageRefused)
			store.Refused(ctx, approval.Action{ID: k.Action, Key: key, SiteSlug: st.session.Site.Slug, ClientID: st.session.ClientID}, approval.Reason(approval.ErrOtherClient))
			return nil, toolerr.New(toolerr.ApprovalInvalid, otherClientMessage)
		}
		if !ok {
			st.setApproval(StageRefused)
			store.Refused(ctx, approval.Action{Key: key, SiteSlug: st.session.Site.Slug, ClientID: st.session.ClientID}, "invalid_state")
			return nil, toolerr.New(toolerr.ApprovalInvalid,
				"the request state is not one erpgate issued for this call (same caller, tool and arguments); nothing was written. Call the tool again without it to propose the change afresh")
		}
		known := approval.Action{ID: k.Action, Key: key, SiteSlug: st.session.Site.Slug, ClientID: st.session.ClientID}
		if k.expired(store.Now()) {
			st.setApproval(StageRefused)
			store.Refused(ctx, known, approval.Reason(approval.ErrExpired))
			return nil, toolerr.New(toolerr.ApprovalExpired, "the approval for this change ran out (%s after it was proposed); nothing was written. Call again to propose it afresh", approval.TTL)
		}
		if declined(req.Params.InputResponses) {
			st.setApproval(StageRefused)
			store.Refused(ctx, known, "declined")
			return nil, toolerr.New(toolerr.ApprovalRejected, "the approval was declined; nothing was written")
		}
		if a, err = store.Get(ctx, key.SiteID, k.Action); err != nil {
			if errors.Is(err, approval.ErrNotFound) {
				st.setApproval(StageRefused)
				return nil, toolerr.New(toolerr.ApprovalInvalid, "the pending change this request names no longer exists; nothing was written. Call again to propose it afresh")
			}
			return nil, err
		}
		if k.Client == "" && a.ClientID != key.ClientID {
			st.setApproval(StageRefused)
			store.Refused(ctx, known, approval.Reason(approval.ErrOtherClient))
			return nil, toolerr.New(toolerr.ApprovalInvalid, otherClientMessage)
		}
		found = true
	} else if a, found, err = store.Open(ctx, key); err != nil {
		return nil, err
	}
	if found && a.Approver != approver && (a.Status == approval.Proposed || a.Status == approval.Approved) {
		// The site named another approver of service-token writes since
		// it was proposed: what the one replaced approves (or would) no
		// longer counts. The call is proposed afresh, to the new one.
		store.Refused(ctx, a, "approver_changed")
		if err := store.Report(context.WithoutCancel(ctx), key.SiteID, a.ID); err != nil {
			e.log.Warn("approval: mark reported", zap.String("action_id", a.ID.String()), zap.Error(err))
		}
		found = false
	}
	if !found {
		if a, err = e.propose(ctx, st, ct, key, approver, args); err != nil {
			return nil, err
		}
		return e.ask(st, a, mode)
	}

	now := store.Now()
	switch {
	case a.Status == approval.Proposed && !a.Expired(now):
		return e.ask(st, a, mode)
	case a.Status == approval.Approved && !a.Expired(now):
		return e.execute(ctx, st, ct, key, a, args)
	}
	// Every other outcome is told once: then the same call proposes
	// afresh. A write still running (not expired) is told to every
	// racing retry, and stays open.
	st.setApproval(StageRefused)
	store.Refused(ctx, a, refusal(a, now))
	if a.Status == approval.Executing && !a.Expired(now) {
		return nil, outcomeError(a, now)
	}
	if err := store.Report(context.WithoutCancel(ctx), key.SiteID, a.ID); err != nil {
		e.log.Warn("approval: mark reported", zap.String("action_id", a.ID.String()), zap.Error(err))
	}
	return nil, outcomeError(a, now)
}

// writeKey is the call's approval key and who must approve it, or why the
// caller may not write.
func (e *Engine) writeKey(st *requestState, ct *compiledTool, args json.RawMessage) (approval.Key, string, error) {
	digest, err := approval.Digest(args)
	if err != nil {
		return approval.Key{}, "", toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments cannot be read one way only (a repeated name?)")
	}
	p := st.session.Principal
	key := approval.Key{SiteID: st.session.Site.ID, AuthType: p.AuthType, ClientID: st.session.ClientID, Tool: ct.tool.Name, ArgsDigest: digest}
	switch p.AuthType {
	case "oauth":
		if p.Subject == "" {
			return key, "", toolerr.New(toolerr.PermissionDenied, "this sign-in names no ERP user, and a write needs that user's approval")
		}
		key.Principal = p.Subject
		return key, p.Subject, nil
	case "service_token":
		var approver string
		if ss := e.live.Load().sites[st.session.Site.ID]; ss != nil {
			approver = ss.approver
		}
		if approver == "" || st.session.ClientID == "" {
			return key, "", toolerr.New(toolerr.PermissionDenied,
				"service tokens may not write on this site: its operator must turn on service_writes and name the ERP user who approves them (service_write_approver)")
		}
		key.Principal = st.session.ClientID
		return key, approver, nil
	}
	return key, "", toolerr.New(toolerr.PermissionDenied, "this kind of caller may not write")
}

// askMode reads what the client declared: in the 2026-07-28 request's
// _meta, or at initialize in the capability session id.
func (e *Engine) askMode(ctx context.Context, st *requestState) askMode {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if urlElicitation(info.ClientCapabilities) {
			return askByInput
		}
		return askByError
	}
	if mcp.IsModernProtocol(st.header.Get(mcp.HeaderProtocolVersion)) {
		var meta struct {
			Caps *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
		}
		if len(st.meta) > 0 && json.Unmarshal(st.meta, &meta) == nil && urlElicitation(meta.Caps) {
			return askByInput
		}
		return askByError
	}
	var cs capabilitySession
	if e.sessions.open(st.header.Get(HeaderSessionID), &cs) && cs.URL && cs.Site == st.session.Site.ID {
		return askByURLError
	}
	return askByError
}

func urlElicitation(c *mcp.ClientCapabilities) bool {
	return c != nil && c.Elicitation != nil && c.Elicitation.URL != nil
}

// declined reports whether the client's answer to the approval's
// elicitation was decline or cancel.
func declined(responses mcp.InputResponses) bool {
	r, ok := responses[inputKey]
	if !ok {
		return false
	}
	if err := r.DecodeFor(mcp.MethodElicitationCreate); err != nil || r.Elicitation == nil {
		return false
	}
	return r.Elicitation.Action == mcp.ElicitationResponseActionDecline || r.Elicitation.Action == mcp.ElicitationResponseActionCancel
}

// propose reads the preview as the caller and stores the pending action.
func (e *Engine) propose(ctx context.Context, st *requestState, ct *compiledTool, key approval.Key, approver string, args json.RawMessage) (approval.Action, error) {
	_, span := startSpan(ctx, "preview")
	preview, err := ct.tool.Preview(ctx, e.newCall(st, ct, args, connector.Read))
	endSpan(span, err)
	if err != nil {
		return approval.Action{}, fmt.Errorf("%s/%s preview on %s: %w", ct.kind, ct.tool.Name, st.session.Site.Slug, err)
	}
	if preview == nil {
		return approval.Action{}, toolerr.New(toolerr.Internal, "the tool gave no preview of its change")
	}
	redactPreview(e.redactor(st, ct), preview)
	a, err := e.opts.Approvals.Propose(ctx, approval.Action{Key: key, SiteSlug: st.session.Site.Slug, Kind: ct.kind,
		ClientID: st.session.ClientID, Approver: approver, Preview: *preview})
	if err != nil {
		return approval.Action{}, err
	}
	return a, nil
}

// ask asks the client to have the person approve a.
func (e *Engine) ask(st *requestState, a approval.Action, mode askMode) (*mcp.CallToolResult, error) {
	st.setApproval(StageProposed)
	st.setOutcome(usage.Error, string(toolerr.ApprovalRequired))
	url := ApprovalURL(e.opts.PublicBaseURL, a.ID, e.opts.LinkKey)
	whose, who := "your approval", "you"
	if a.Key.AuthType == "service_token" {
		whose, who = "the approval of "+a.Approver, a.Approver
	}
	message := fmt.Sprintf("erpgate needs %s to approve this change before it is made: %s. Open the page, check it, and approve or reject it (within %s).",
		who, a.Preview.Summary, inWords(a.ExpiresAt.Sub(e.opts.Approvals.Now())))
	elicitation := mcp.ElicitationParams{Mode: mcp.ElicitationModeURL, Message: message, ElicitationID: a.ID.String(), URL: url}
	switch mode {
	case askByInput:
		state, err := e.states.seal(newApprovalState(a))
		if err != nil {
			return nil, toolerr.Wrap(toolerr.Internal, err, "the approval request could not be made")
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{}}
		res.ResultType = mcp.ResultTypeInputRequired
		res.InputRequests = mcp.InputRequests{inputKey: mcp.NewElicitationInputRequest(elicitation)}
		res.RequestState = state
		return res, nil
	case askByURLError:
		return nil, mcp.URLElicitationRequiredError{Elicitations: []mcp.ElicitationParams{elicitation}}
	}
	return nil, toolerr.Wrap(toolerr.ApprovalRequired, &approvalLink{url: url},
		"nothing was written yet: this change needs %s. Show the user this link and ask them to approve it: %s — then call %s again with exactly the same arguments (within %s). The change: %s",
		whose, url, a.Key.Tool, inWords(approval.TTL), a.Preview.Summary)
}

// inWords says a time left to decide as a person reads it ("10 minutes"),
// never in Go's duration notation ("10m0s").
func inWords(d time.Duration) string {
	switch n := int(d.Round(time.Minute) / time.Minute); {
	case n < 1:
		return "less than a minute"
	case n == 1:
		return "1 minute"
	default:
		return fmt.Sprintf("%d minutes", n)
	}
}

// execute claims the approved action and runs the write once.
func (e *Engine) execute(ctx context.Context, st *requestState, ct *compiledTool, key approval.Key, a approval.Action, args json.RawMessage) (*mcp.CallToolResult, error) {
	store := e.opts.Approvals
	claimed, err := store.Claim(ctx, key, a.ID)
	if err != nil {
		st.setApproval(StageRefused)
		switch {
		case errors.Is(err, approval.ErrOtherClient):
			return nil, toolerr.New(toolerr.ApprovalInvalid, otherClientMessage)
		case errors.Is(err, approval.ErrUsed):
			return nil, toolerr.New(toolerr.ApprovalInvalid, "this approval was already used by another call, which is making (or made) the change; nothing more was written. Check the ERP for the result")
		case errors.Is(err, approval.ErrNotApproved):
			return e.ask(st, a, e.askMode(ctx, st))
		case errors.Is(err, approval.ErrWithdrawn):
			// Withdrawn between this call's read and its claim: told
			// once, like a withdrawal the call found.
			if rerr := store.Report(context.WithoutCancel(ctx), key.SiteID, claimed.ID); rerr != nil {
				e.log.Warn("approval: mark reported", zap.String("action_id", claimed.ID.String()), zap.Error(rerr))
			}
		}
		return nil, outcomeError(claimed, store.Now())
	}
	call := e.newCall(st, ct, args, ct.tool.Effect)
	call.Approved = &connector.Approved{ID: claimed.ID.String(), Preview: claimed.Preview, By: claimed.DecidedBy}
	data, err := e.invoke(ctx, st, ct, call)
	done := context.WithoutCancel(ctx)
	if err != nil && errors.Is(err, connector.ErrNotAsApproved) {
		// Made, but not as approved: the tool's error says what differs.
		// The action is executed (never run or proposed as if it had
		// failed), and the caller is told the tool's error.
		te := toolerr.Classify(err)
		message, _ := e.redactor(st, ct).RedactText(te.Message)
		said, _ := e.redactor(st, ct).RedactText(te.ERPSaid)
		st.setApproval(StageExecuted)
		if ferr := store.FinishNotAsApproved(done, key.SiteID, claimed.ID, string(te.Code), message, said); ferr != nil {
			e.log.Error("approval: store the result", zap.String("action_id", claimed.ID.String()), zap.Error(ferr))
		}
		return nil, err
	}
	if err != nil {
		te := toolerr.Classify(err)
		message, _ := e.redactor(st, ct).RedactText(te.Message)
		said, _ := e.redactor(st, ct).RedactText(te.ERPSaid)
		if said == redact.WithheldDatabaseError {
			// A sentence of erpgate's, not the ERP's words to quote.
			said = ""
		}
		st.setApproval(StageFailed)
		if toolerr.NothingWritten(err) {
			// Certain to have written nothing (the ERP refused it before it
			// ran, or nothing was sent): the approval holds, its expiry
			// unchanged, and the same call runs it again.
			kept, rerr := store.Release(done, key.SiteID, claimed.ID, string(te.Code), said)
			if rerr == nil {
				until := kept.ExpiresAt.UTC().Format(time.RFC3339)
				if te.Retryable() {
					return nil, toolerr.Wrap(te.Code, err,
						"%s. The approval still holds until %s: calling %s again with exactly the same arguments makes the approved change, with no new approval",
						strings.TrimSuffix(message, "."), until, key.Tool).WithRetryAfter(te.RetryAfter).WroteNothing()
				}
				// A refusal that calling again will meet again (a missing
				// right, a value the ERP does not accept): the approval
				// holds for when it has been put right in the ERP.
				return nil, toolerr.Wrap(te.Code, err,
					"%s. The approval still holds until %s: once the user has put right in the ERP what it refused, calling %s again with exactly the same arguments makes the approved change, with no new approval; calling again before that meets the same refusal",
					strings.TrimSuffix(message, "."), until, key.Tool).WroteNothing()
			}
			e.log.Error("approval: keep the approval", zap.String("action_id", claimed.ID.String()), zap.Error(rerr))
		}
		if ferr := store.Fail(done, key.SiteID, claimed.ID, string(te.Code), message, said); ferr != nil {
			e.log.Error("approval: store the failure", zap.String("action_id", claimed.ID.String()), zap.Error(ferr))
		}
		if approval.OutcomeUnknown(string(te.Code)) {
			// Sent, maybe made: a retry would propose it afresh and could
			// make it twice. The warning follows the message as redacted:
			// one the redaction withholds whole (a database error) would
			// otherwise take the warning with it.
			return nil, toolerr.Wrap(te.Code, unknownOutcome{err},
				"%s. The outcome of the approved change is not known: the ERP may have made it. Check the ERP before proposing it again; do not simply retry",
				strings.TrimSuffix(message, "."))
		}
		return nil, err
	}
	st.setApproval(StageExecuted)
	if ferr := store.Finish(done, key.SiteID, claimed.ID, data, "", ""); ferr != nil {
		e.log.Error("approval: store the result", zap.String("action_id", claimed.ID.String()), zap.Error(ferr))
	}
	st.setOutcome(usage.Success, "")
	return &mcp.CallToolResult{
		Content:              []mcp.Content{mcp.NewTextContent(unsafe.String(unsafe.SliceData(data), len(data)))},
		RawStructuredContent: data,
	}, nil
}

// otherClientMessage refuses an approval given to what another MCP client
// proposed (the same person's, or another service token's).
const otherClientMessage = "this approval was given to a change proposed through another AI client, and only that client can use it; nothing was written. Call the tool again without the request state to propose the change from this client"

// refusal is the audit reason for a call that found a no longer usable.
func refusal(a approval.Action, now time.Time) string {
	switch a.Status {
	case approval.Rejected:
		return approval.Reason(approval.ErrRejected)
	case approval.Withdrawn:
		return approval.Reason(approval.ErrWithdrawn)
	case approval.Executing, approval.Executed, approval.Failed:
		return approval.Reason(approval.ErrUsed)
	}
	return approval.Reason(approval.ErrExpired)
}

// maxTold bounds the stored result quoted in "already used".
const maxTold = 1024

// outcomeError is the tool error for an action that can no longer be run.
func outcomeError(a approval.Action, now time.Time) error {
	switch a.Status {
	case approval.Rejected:
		return toolerr.New(toolerr.ApprovalRejected, "%s rejected this change on erpgate's page; nothing was written. Call again only if the user wants to propose it afresh", a.DecidedBy)
	case approval.Withdrawn:
		return toolerr.New(toolerr.ApprovalRejected, "%s withdrew the approval of this change on erpgate's page before it was made; nothing was written. Call again only if the user wants to propose it afresh", a.DecidedBy)
	case approval.Executing:
		return toolerr.New(toolerr.ApprovalInvalid, "this approval was already used: the change started at %s, and its outcome is not known (it may still be running, or erpgate stopped while it ran). Check the ERP before trying again", a.ExecutedAt.UTC().Format(time.RFC3339))
	case approval.Executed:
		if a.NotAsApproved() {
			return toolerr.New(toolerr.ApprovalInvalid, "this approval was already used: the change (%s) was made at %s, but not as approved (%s: %s). Nothing more was written; check it in the ERP, and call again only to propose it afresh", a.Preview.Summary, a.ExecutedAt.UTC().Format(time.RFC3339), a.ErrorCode, a.ErrorMessage)
		}
		result := string(a.Result)
		if len(result) > maxTold {
			result = connector.CutText(result, maxTold) + "…"
		}
		return toolerr.New(toolerr.ApprovalInvalid, "this approval was already used: the change (%s) was made at %s, with the result %s. Nothing more was written; call again only to propose it afresh", a.Preview.Summary, a.ExecutedAt.UTC().Format(time.RFC3339), result)
	case approval.Failed:
		if a.OutcomeUnknown() {
			return toolerr.New(toolerr.ApprovalInvalid, "this approval was already used: the change started at %s, and its outcome is not known (%s: %s): the ERP may have made it. Check the ERP before proposing it again", a.ExecutedAt.UTC().Format(time.RFC3339), a.ErrorCode, a.ErrorMessage)
		}
		return toolerr.New(toolerr.ApprovalInvalid, "this approval was already used: the change failed at %s (%s: %s). Call again to propose it afresh", a.ExecutedAt.UTC().Format(time.RFC3339), a.ErrorCode, a.ErrorMessage)
	}
	if a.ID != uuid.Nil && a.Expired(now) {
		return toolerr.New(toolerr.ApprovalExpired, "the approval for this change ran out (%s after it was proposed) before the change was made; nothing was written. Call again to propose it afresh", approval.TTL)
	}
	return toolerr.New(toolerr.ApprovalInvalid, "this call has no usable approval; nothing was written. Call again to propose the change")
}

// issueSession sets, on the reply to an initialize that succeeded, the
// capability session id: what the client declared, sealed, so that a
// later call on any replica knows whether it takes URL elicitations. It
// runs as mcp-go's AfterInitialize hook, which runs only when the
// initialize has a result and before the reply is written: an initialize
// refused (by mcp-go or by its transport) gets no session.
func (e *Engine) issueSession(ctx context.Context, _ any, req *mcp.InitializeRequest, result *mcp.InitializeResult) {
	st := stateFrom(ctx)
	if e.sessions == nil || st == nil || st.reply == nil || req == nil || result == nil {
		return
	}
	token, err := e.sessions.seal(capabilitySession{Version: req.Params.ProtocolVersion, URL: urlElicitation(&req.Params.Capabilities),
		Site: st.session.Site.ID, Issued: time.Now().Unix()})
	if err != nil {
		return
	}
	st.reply.Header().Set(HeaderSessionID, token)
}

// redactPreview applies the call's redaction rules to a preview before it
// is stored and shown, as they apply to a result: the values of a field,
// or of a table column, whose ERP name or label the rules cover become
// the placeholder, and the sentences pass through RedactText.
func redactPreview(r *redact.Redactor, p *connector.Preview) {
	covered := func(names ...string) bool {
		for _, n := range names {
			if n != "" && r.SensitiveName(n) {
				return true
			}
		}
		return false
	}
	// shaped redacts what has a sensitive shape in a value (a card number,
	// an IBAN, an SSN), as in a result's string under the member name.
	shaped := func(name, v string) string {
		if v == "" {
			return v
		}
		out, _ := r.Apply(map[string]any{name: v})
		if s, ok := out.(map[string]any)[name].(string); ok {
			return s
		}
		return redact.Placeholder
	}
	for i := range p.Fields {
		f := &p.Fields[i]
		if covered(f.Name, f.Label) {
			if f.Before != "" {
				f.Before = redact.Placeholder
			}
			f.After = redact.Placeholder
			continue
		}
		f.Before, f.After = shaped(f.Name, f.Before), shaped(f.Name, f.After)
	}
	for t := range p.Tables {
		tab := &p.Tables[t]
		for c, col := range tab.Columns {
			for _, row := range tab.Rows {
				if c >= len(row) {
					continue
				}
				if covered(col) {
					row[c] = redact.Placeholder
				} else {
					row[c] = shaped(col, row[c])
				}
			}
		}
	}
	p.Summary, _ = r.RedactText(p.Summary)
	for i := range p.Warnings {
		p.Warnings[i], _ = r.RedactText(p.Warnings[i])
	}
}

// hiddenArgument names an argument of a write that the call's redaction
// rules would hide (a card number or an IBAN in its text, a member the
// rules name): the approval page shows the preview redacted, so a person
// would approve "[REDACTED]" where the ERP gets the model's value. Only
// the call's own values count; what the ERP holds already may be hidden
// (the preview's before values).
func hiddenArgument(r *redact.Redactor, args json.RawMessage) (string, bool) {
	if r == nil {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	_, found := r.Apply(v)
	if found.Count == 0 {
		return "", false
	}
	if len(found.Paths) > 0 {
		return found.Paths[0], true
	}
	return "an argument", true
}

// nulField names the first argument whose text (or member name) holds a
// NUL character, JSON's \u0000: the approval page could not show it as
// what it is (Postgres keeps U+FFFD in its place, and some systems end a
// text there), so a person would approve one value and the ERP get
// another.
func nulField(args json.RawMessage) (string, bool) {
	if !bytes.Contains(args, []byte(`\u0000`)) {
		return "", false
	}
	var v any
	if json.Unmarshal(args, &v) != nil {
		return "", false
	}
	p, ok := nulIn(v, "")
	return cmp.Or(p, "the arguments"), ok
}

// nulIn is nulField's walk; path is where v is ("" for the arguments
// themselves).
func nulIn(v any, path string) (string, bool) {
	switch v := v.(type) {
	case string:
		return path, strings.ContainsRune(v, 0)
	case []any:
		for i, e := range v {
			if p, ok := nulIn(e, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, 0) {
				return "a member name in " + cmp.Or(path, "the arguments"), true
			}
			name := k
			if path != "" {
				name = path + "." + k
			}
			if p, ok := nulIn(e, name); ok {
				return p, true
			}
		}
	}
	return "", false
}
