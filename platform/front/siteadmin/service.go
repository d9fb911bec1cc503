package siteadmin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/netguard"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// Deps is what the layer needs from the rest of erpgate.
type Deps struct {
	// Store is the site registry; events are kept there too.
	Store *sites.Store
	// Registry holds the connectors this deployment serves.
	Registry *connector.Registry
	// IsDevHost reports whether plain http is acceptable for host (besides
	// loopback, which always is). It may be nil.
	IsDevHost func(host string) bool
	// HTTPClient returns the outbound client for site, authorised with
	// auth. It is used to verify credentials before they are saved.
	HTTPClient func(site connector.Site, auth connector.Authorizer) *http.Client
	// ERPAddresses is the address policy for ERPs: a site is registered
	// (or moved) only if its host is exempt or resolves to public
	// addresses only. Nil (development) allows every address.
	ERPAddresses *netguard.Policy
	// Settings is the live settings store ChangeSetting changes; nil
	// refuses ChangeSetting.
	Settings *livesettings.Store
	// PublicURL builds erpgate's advertised URLs from the public base URL:
	// the preflight checks the OAuth redirect URI it gives. It may be nil
	// (then that check is skipped).
	PublicURL func(path string) string
	// Logger receives one line per audit event (event=admin_event), and
	// one when an event cannot be stored. It may be nil.
	Logger *zap.Logger
}

// Service carries out site-administration actions. It is safe for
// concurrent use.
type Service struct {
	deps Deps
	log  *zap.Logger
}

// New returns the layer. It panics if a required dependency is missing,
// since that is a wiring mistake found at start-up.
func New(deps Deps) *Service {
	switch {
	case deps.Store == nil:
		panic("siteadmin: New: Store is nil")
	case deps.Registry == nil:
		panic("siteadmin: New: Registry is nil")
	case deps.HTTPClient == nil:
		panic("siteadmin: New: HTTPClient is nil")
	}
	log := deps.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Service{deps: deps, log: log.Named("siteadmin")}
}

// ActorKind says who carried out an action.
type ActorKind string

// The kinds of actor.
const (
	// ActorOperator is erpgate's operator, with the admin token.
	ActorOperator ActorKind = "operator"
	// ActorERPAdmin is an administrator of the site's ERP, signed in
	// through the ERP on the site owner's page.
	ActorERPAdmin ActorKind = "erp_admin"
	// ActorRegistrant is a person registering a site on the registration
	// page, before their ERP sign-in proved them its administrator.
	ActorRegistrant ActorKind = "registrant"
)

// Actor is who carried out an action, as audit events name them.
type Actor struct {
	Kind ActorKind
	// Name is the ERP user for an ERP administrator, "admin_token" for the
	// operator, or a registration's id.
	Name string
}

// Operator is the operator acting with the admin token.
var Operator = Actor{Kind: ActorOperator, Name: "admin_token"}

// OperatorSession is the operator acting in the console, in the console
// session named by ref (consolesession.Session.Ref).
func OperatorSession(ref string) Actor {
	return Actor{Kind: ActorOperator, Name: "console_session:" + ref}
}

// ERPAdmin is the ERP administrator user acting on the owner's page.
func ERPAdmin(user string) Actor { return Actor{Kind: ActorERPAdmin, Name: user} }

// Registrant is the person behind the registration with id, before (and
// while) their ERP sign-in proves them the ERP's administrator.
func Registrant(id string) Actor { return Actor{Kind: ActorRegistrant, Name: id} }

// The actions audit events name.
const (
	ActionCreateSite         = "create_site"
	ActionUpdateSite         = "update_site"
	ActionDeleteSite         = "delete_site"
	ActionPutAPIConnection   = "put_api_connection"
	ActionPutOAuthConnection = "put_oauth_connection"
	ActionRotateOAuthSecret  = "rotate_oauth_secret"
	ActionDeleteConnection   = "delete_connection"
	ActionIssueServiceToken  = "issue_service_token"
	ActionRevokeServiceToken = "revoke_service_token"
	ActionRevokePerson       = "revoke_person"
	// The steps of a self-service registration before the site exists:
	// started (address checked), OAuth client given, the proof of
	// ownership verified or refused. Registered is ActionCreateSite.
	ActionRegisterStart  = "register_start"
	ActionRegisterClient = "register_client"
	ActionRegisterProof  = "register_proof"
	// The operator console's own actions.
	ActionConsoleSignIn  = "console_sign_in"
	ActionConsoleSignOut = "console_sign_out"
	ActionChangeSetting  = "change_setting"
)

// Record stores the audit event of an action carried out outside this
// layer (a console sign-in, a settings change), as the layer's own
// actions are: siteID is uuid.Nil and slug empty for a deployment-wide
// action; err, if not nil, is the refusal (an *Error says why in its
// Message; any other error is recorded as internal).
func (s *Service) Record(ctx context.Context, actor Actor, siteID uuid.UUID, slug, action string, details map[string]any, err error) {
	s.record(ctx, actor, siteID, slug, action, details, err)
}

// Refusal makes the *Error of a refusal of kind with message, for Record
// and for callers that refuse in this layer's words.
func Refusal(kind Kind, message string) *Error { return &Error{Kind: kind, Message: message} }

// Outcomes of an action.
const (
	OutcomeSuccess = "success"
	OutcomeRefused = "refused"
	OutcomeError   = "error"
)

// record stores the audit event of one action (see logged). A failure to
// store the event is logged, not returned: the action has already happened
// or been refused.
func (s *Service) record(ctx context.Context, actor Actor, siteID uuid.UUID, slug, action string, details map[string]any, err error) {
	e := s.logged(actor, siteID, slug, action, details, err)
	// The event is recorded even when the caller's request was cancelled
	// right after the action.
	if rerr := s.deps.Store.RecordEvent(context.WithoutCancel(ctx), e); rerr != nil {
		s.log.Error("audit event not recorded", zap.String("action", action), zap.String("site_slug", slug), zap.Error(rerr))
	}
}

// RecordAnonymousRefusal records the refusal err of an action by a visitor
// erpgate knows nothing of (no signed-in person, nothing stored for them
// yet): a registration's start, a console sign-in with a wrong token, an
// owner's sign-in on site siteID that the ERP did not complete (uuid.Nil
// and "" for none). Anyone can cause these from many addresses, each
// within its own limit, so they are not a row each: the log line is
// written as for every event, and the table counts the refusal in the
// summary row of its action, site and minute, deployment-wide, by code (a
// word from a fixed set, never the visitor's input). Nothing changed, so
// no audit trail is lost.
func (s *Service) RecordAnonymousRefusal(ctx context.Context, actor Actor, siteID uuid.UUID, slug, action, code string, details map[string]any, err error) {
	// The log line keeps what the row no longer does: each refusal, with
	// what was sent (its address, its source), bounded.
	var extra []zap.Field
	for _, k := range []string{"source", "base_url", "kind"} {
		if v, ok := details[k].(string); ok {
			extra = append(extra, zap.String(k, boundText(v)))
		}
	}
	e := s.logged(actor, siteID, slug, action, details, err, extra...)
	if rerr := s.deps.Store.RecordRefusalSummary(context.WithoutCancel(ctx), e, code); rerr != nil {
		s.log.Error("audit event not recorded", zap.String("action", action), zap.Error(rerr))
	}
}

// logged builds the audit event of one action and writes its log line. A
// refusal's reason is its kind and message (safe to show, never a
// secret), and its sentence the same for people (Error.Sentence, inputs
// named by fieldLabel); an internal failure's reason is only "internal".
func (s *Service) logged(actor Actor, siteID uuid.UUID, slug, action string, details map[string]any, err error, extra ...zap.Field) sites.Event {
	// A refusal keeps what was sent, which may be anything up to a whole
	// request body: each text is kept to a bound.
	for k, v := range details {
		if text, ok := v.(string); ok {
			details[k] = boundText(text)
		}
	}
	e := sites.Event{SiteID: siteID, SiteSlug: boundText(slug), ActorKind: string(actor.Kind), Actor: boundText(actor.Name),
		Action: action, Outcome: OutcomeSuccess, Details: details}
	if err != nil {
		ae := asError(err)
		e.Outcome, e.Reason = OutcomeRefused, boundText(string(ae.Kind)+": "+ae.Message)
		e.Sentence = boundText(ae.PeopleSentence(fieldLabel))
		if ae.Kind == Internal {
			e.Outcome, e.Reason, e.Sentence = OutcomeError, string(Internal), ""
		}
	}
	fields := []zap.Field{zap.String("event", "admin_event"), zap.String("action", action),
		zap.String("site_slug", slug), zap.String("actor_kind", e.ActorKind), zap.String("actor", e.Actor),
		zap.String("outcome", e.Outcome)}
	if siteID != uuid.Nil {
		fields = append(fields, zap.String("site_id", siteID.String()))
	}
	if e.Reason != "" {
		fields = append(fields, zap.String("reason", e.Reason))
	}
	s.log.Info("site admin event", append(fields, extra...)...)
	return e
}

// OldRefusalSentence is a refused event's sentence for people when the
// event has none: one recorded before events kept it (migration 00037).
// It tells the refusal by the event's action and the kind its reason
// begins with ("conflict: …"), never in the reason's own words, which are
// the admin API's. It is "" for a reason that names no kind of refusal
// (the approval store's codes).
func OldRefusalSentence(action, reason string) string {
	prefix, _, ok := strings.Cut(reason, ": ")
	if !ok {
		return ""
	}
	kind := Kind(prefix)
	if s, ok := oldRefusals[oldRefusal{action, kind}]; ok {
		return asSentence(s)
	}
	if s, ok := oldRefusalKinds[kind]; ok {
		return asSentence(s)
	}
	return ""
}

type oldRefusal struct {
	action string
	kind   Kind
}

// oldRefusals are the refusals an action's kind of refusal tells apart.
var oldRefusals = map[oldRefusal]string{
	{ActionIssueServiceToken, Conflict}:  "the site had no fixed API credential, which service tokens act with; nothing was issued",
	{ActionPutAPIConnection, Rejected}:   "the ERP did not accept the credential; nothing was saved",
	{ActionRotateOAuthSecret, Rejected}:  "the sign-in at the ERP with the new client secret did not succeed; nothing was saved",
	{ActionUpdateSite, Rejected}:         "the sign-in at the ERP did not prove the change; nothing was changed",
	{ActionOwnerSignIn, Rejected}:        "the sign-in at the ERP did not prove an administrator of the ERP",
	{ActionRevokePerson, NotFound}:       "that person had no access through erpgate to revoke",
	{ActionRevokeServiceToken, NotFound}: "there was no such service token to revoke",
}

// oldRefusalKinds are the other refusals, by kind.
var oldRefusalKinds = map[Kind]string{
	Invalid:     "what was entered was not accepted; nothing was changed",
	NotFound:    "what it named did not exist any more; nothing was changed",
	Conflict:    "it conflicted with the site's state at the time; nothing was changed",
	Rejected:    "the ERP refused it; nothing was changed",
	Unreachable: "the ERP could not be reached; nothing was changed",
}

// maxAuditText bounds each text an audit event keeps from a request.
const maxAuditText = 1024

// boundText is s cut to maxAuditText bytes (at a character), marked with
// an ellipsis when cut.
func boundText(s string) string {
	if len(s) <= maxAuditText {
		return s
	}
	return strings.ToValidUTF8(s[:maxAuditText], "") + "…"
}

// connectorOf returns the connector serving site's kind. A missing one
// means the deployment dropped a connector its registry still has sites
// for.
func (s *Service) connectorOf(site sites.Site) (connector.Connector, error) {
	conn, ok := s.deps.Registry.Get(site.Kind)
	if !ok {
		return nil, internal(fmt.Errorf("siteadmin: site %s has kind %q, which no registered connector serves", site.Slug, site.Kind))
	}
	return conn, nil
}

// storeError maps a store error nobody translated.
func storeError(err error) error {
	var ve *sites.ValidationError
	switch {
	case errors.As(err, &ve):
		return &Error{Kind: Invalid, Message: ve.Message, Err: err}
	case errors.Is(err, sites.ErrNotFound):
		return &Error{Kind: NotFound, Message: "the resource does not exist", Err: err}
	case errors.Is(err, sites.ErrConflict):
		return &Error{Kind: Conflict, Message: "the change conflicts with an existing resource", Err: err}
	}
	return asError(err)
}
