package siteadmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/netguard"
	"github.com/erpgate/erpgate/platform/infra/redact"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// VerifyTimeout bounds the ERP round trips that verify a credential, so an
// unresponsive ERP gives the person an answer rather than a hung request.
const VerifyTimeout = 30 * time.Second

// OAuthCredentialFields are the fields of an oauth connection: the OAuth
// client registered on the ERP for erpgate, whose redirect URI is the
// site's (sites.Site.CallbackPath under the public base URL).
var OAuthCredentialFields = []connector.CredentialField{
	{Name: "client_id", Description: "client id of the OAuth client registered on the ERP for erpgate"},
	{Name: "client_secret", Description: "client secret of that OAuth client", Secret: true},
}

// PutAPIConnection verifies an API credential against the ERP and, only if
// the ERP accepts it, saves it as the site's api_token connection with the
// identity it authenticated as. credentials nil means none was given.
// Its owner cannot replace it while the operator has the site disabled.
func (s *Service) PutAPIConnection(ctx context.Context, actor Actor, site sites.Site, credentials map[string]string) (sites.Connection, error) {
	var saved sites.Connection
	err := ownerRefused(actor, site, ownerAPICredentialRefusal)
	if err == nil {
		saved, err = s.putAPIConnection(ctx, partyOf(actor), site, credentials)
	}
	details := map[string]any{}
	if err == nil {
		details["verified_identity"] = saved.VerifiedIdentity
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionPutAPIConnection, details, err)
	return saved, err
}

// ownerAPICredentialRefusal says why the owner of a site the operator
// disabled cannot give it an API credential.
const ownerAPICredentialRefusal = "its API credential cannot be changed until they enable it again; nothing was saved"

// putAPIConnection verifies and saves the credential as party by: the
// owner's is refused by the write itself when the operator disabled the
// site while it was being verified.
func (s *Service) putAPIConnection(ctx context.Context, by sites.Party, site sites.Site, credentials map[string]string) (sites.Connection, error) {
	identity, fields, err := s.verifiedAPICredential(ctx, site, credentials)
	if err != nil {
		return sites.Connection{}, err
	}
	saved, err := s.deps.Store.PutVerifiedConnectionBy(ctx, by, site.ID, site.BaseURL, sites.ConnectionAPIToken, identity, fields)
	if err != nil {
		return sites.Connection{}, apiConnectionStoreError(site, err, ownerAPICredentialRefusal)
	}
	return saved, nil
}

// verifiedAPICredential checks the submitted API credential's fields and
// verifies them against the ERP: the identity they authenticate as.
func (s *Service) verifiedAPICredential(ctx context.Context, site sites.Site, credentials map[string]string) (string, map[string]secrets.Secret, error) {
	if credentials == nil {
		return "", nil, noCredential()
	}
	conn, err := s.connectorOf(site)
	if err != nil {
		return "", nil, err
	}
	fields, err := credentialFields(conn.APICredentialFields(), credentials)
	if err != nil {
		return "", nil, err
	}
	identity, err := s.verifyAPICredential(ctx, site, conn, fields)
	if err != nil {
		return "", nil, err
	}
	return identity, fields, nil
}

// apiConnectionStoreError is the refusal of a verified API credential's
// write; disabled says what the operator's disable keeps from the owner.
func apiConnectionStoreError(site sites.Site, err error, disabled string) error {
	switch {
	case errors.Is(err, sites.ErrOperatorDisabled):
		return operatorDisabled(err, disabled)
	case errors.Is(err, sites.ErrNotFound):
		return newError(NotFound, err, "site %s was deleted while its credential was being verified; nothing was saved", toolerr.Quote(site.Slug))
	case errors.Is(err, sites.ErrBaseURLChanged):
		e := newError(Conflict, err, "site %s moved to another base URL while its credential was being verified against %s; nothing was saved", toolerr.Quote(site.Slug), site.BaseURL)
		e.ForPeople = "the site moved to another address while the credential was being checked at " + site.BaseURL + "; nothing was saved"
		return e
	}
	return storeError(err)
}

// PutAPIConnectionWithToken is PutAPIConnection and IssueServiceToken as
// one write: the credential, verified against the ERP, is saved only with
// the token, so that a refused token (the operator disabled the site
// meanwhile, the site has as many tokens as it may) leaves nothing saved.
// The write is recorded as put_api_connection, and the token, when
// issued, as issue_service_token.
func (s *Service) PutAPIConnectionWithToken(ctx context.Context, actor Actor, site sites.Site, credentials map[string]string, name string, lifetimeDays int) (sites.Connection, sites.ServiceToken, secrets.Secret, error) {
	var (
		saved sites.Connection
		st    sites.ServiceToken
		value secrets.Secret
	)
	err := ownerRefused(actor, site, ownerAPICredentialRefusal)
	if err == nil {
		saved, st, value, err = s.putAPIConnectionWithToken(ctx, partyOf(actor), site, credentials, name, lifetimeDays)
	}
	details := map[string]any{}
	if err == nil {
		details["verified_identity"] = saved.VerifiedIdentity
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionPutAPIConnection, details, err)
	if err == nil {
		s.record(ctx, actor, site.ID, site.Slug, ActionIssueServiceToken, issuedDetails(name, lifetimeDays, &st), nil)
	}
	return saved, st, value, err
}

// ownerAPICredentialAndTokenRefusal says why the owner of a site the
// operator disabled gets neither the credential nor the token.
const ownerAPICredentialAndTokenRefusal = "nothing was saved and no service token was issued"

func (s *Service) putAPIConnectionWithToken(ctx context.Context, by sites.Party, site sites.Site, credentials map[string]string, name string, lifetimeDays int) (sites.Connection, sites.ServiceToken, secrets.Secret, error) {
	if err := sites.ValidateTokenName(name); err != nil {
		return sites.Connection{}, sites.ServiceToken{}, "", validationError(err)
	}
	if err := sites.ValidateTokenLifetimeDays(lifetimeDays); err != nil {
		return sites.Connection{}, sites.ServiceToken{}, "", validationError(err)
	}
	identity, fields, err := s.verifiedAPICredential(ctx, site, credentials)
	if err != nil {
		return sites.Connection{}, sites.ServiceToken{}, "", err
	}
	saved, st, value, err := s.deps.Store.PutVerifiedAPIConnectionWithTokenBy(ctx, by, site.ID, site.BaseURL, identity, fields, name, lifetimeDays)
	if err == nil {
		return saved, st, value, nil
	}
	var full *sites.TooManyServiceTokensError
	if errors.As(err, &full) {
		e := tooManyTokens(site, err, full)
		e.ForPeople = ownerAPICredentialAndTokenRefusal + ": " + e.ForPeople
		return sites.Connection{}, sites.ServiceToken{}, "", e
	}
	return sites.Connection{}, sites.ServiceToken{}, "", apiConnectionStoreError(site, err, ownerAPICredentialAndTokenRefusal)
}

// PutOAuthConnection stores the site's OAuth client; putting it again
// rotates the client secret. There is nothing to verify it with before a
// user signs in (an OAuth client authenticates nobody by itself), so it is
// saved as given; the first sign-in proves it.
func (s *Service) PutOAuthConnection(ctx context.Context, actor Actor, site sites.Site, credentials map[string]string) (sites.Connection, error) {
	saved, err := s.putOAuthConnection(ctx, partyOf(actor), site, credentials)
	details := map[string]any{}
	if credentials != nil && err == nil {
		details["client_id"] = strings.TrimSpace(credentials["client_id"])
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionPutOAuthConnection, details, err)
	return saved, err
}

// putOAuthConnection saves the OAuth client as party by: the owner's is
// refused by the write itself on a site the operator disabled.
func (s *Service) putOAuthConnection(ctx context.Context, by sites.Party, site sites.Site, credentials map[string]string) (sites.Connection, error) {
	if credentials == nil {
		return sites.Connection{}, noCredential()
	}
	conn, err := s.connectorOf(site)
	if err != nil {
		return sites.Connection{}, err
	}
	if _, ok := conn.(connector.UpstreamOAuth); !ok {
		return sites.Connection{}, invalid("%s sites do not support user sign-in with OAuth", site.Kind)
	}
	fields, err := credentialFields(OAuthCredentialFields, credentials)
	if err != nil {
		return sites.Connection{}, err
	}
	saved, err := s.deps.Store.PutConnectionBy(ctx, by, site.ID, sites.ConnectionOAuth, "", fields)
	if err != nil {
		if errors.Is(err, sites.ErrOperatorDisabled) {
			return sites.Connection{}, operatorDisabled(err, ownerSecretRefusal)
		}
		if errors.Is(err, sites.ErrNotFound) {
			return sites.Connection{}, newError(NotFound, err, "site %s was deleted; nothing was saved", toolerr.Quote(site.Slug))
		}
		return sites.Connection{}, storeError(err)
	}
	return saved, nil
}

// noCredential refuses a connection given without its credential.
func noCredential() *Error {
	e := invalid("missing required field: credentials")
	e.ForPeople = "no credential was given; nothing was saved"
	return e
}

// connectionNames are the connection types as people call them.
var connectionNames = map[sites.ConnectionType]string{
	sites.ConnectionAPIToken: "fixed API credential",
	sites.ConnectionOAuth:    "OAuth client",
}

// DeleteConnection removes the site's connection of type typ.
func (s *Service) DeleteConnection(ctx context.Context, actor Actor, site sites.Site, typ sites.ConnectionType) error {
	err := s.deps.Store.DeleteConnection(ctx, site.ID, typ)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		e := newError(NotFound, err, "site %s has no %s connection", toolerr.Quote(site.Slug), typ)
		if name, ok := connectionNames[typ]; ok {
			e.ForPeople = "the site has no " + name + " to remove"
		}
		err = e
	case err != nil:
		err = internal(err)
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionDeleteConnection, map[string]any{"type": string(typ)}, err)
	return err
}

// credentialFields checks the submitted credential against the connector's
// field list, reporting every missing and unknown field at once, and wraps
// the values as secrets. Surrounding white space, a common paste accident,
// is dropped.
func credentialFields(spec []connector.CredentialField, submitted map[string]string) (map[string]secrets.Secret, error) {
	expected := make([]string, 0, len(spec))
	fields := make(map[string]secrets.Secret, len(spec))
	var missing, unknown, garbled []string
	for _, f := range spec {
		expected = append(expected, f.Name)
		value := strings.TrimSpace(submitted[f.Name])
		switch {
		case value == "":
			missing = append(missing, f.Name)
			continue
		case !utf8.ValidString(value) || strings.IndexFunc(value, unicode.IsControl) >= 0:
			// A paste accident too (a line break inside): the value
			// could not go in a request header, and is never shown.
			garbled = append(garbled, f.Name)
			continue
		}
		fields[f.Name] = secrets.Secret(value)
	}
	for name := range submitted {
		if !slices.Contains(expected, name) {
			unknown = append(unknown, toolerr.Quote(name))
		}
	}
	slices.Sort(unknown)
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("missing credential %s: %s", plural(len(missing), "field", "fields"), strings.Join(missing, ", ")))
	}
	if len(unknown) > 0 {
		problems = append(problems, fmt.Sprintf("unknown credential %s: %s", plural(len(unknown), "field", "fields"), strings.Join(unknown, ", ")))
	}
	if len(garbled) > 0 {
		problems = append(problems, fmt.Sprintf("credential %s %s: a line break or another control character inside, or bytes that are not text; paste %s again",
			plural(len(garbled), "field", "fields"), strings.Join(garbled, ", "), plural(len(garbled), "it", "them")))
	}
	if len(problems) > 0 {
		e := invalid("%s (this kind of site expects: %s)", strings.Join(problems, "; "), strings.Join(expected, ", "))
		// A page's form sends only the expected fields, labelled with
		// their descriptions: the person is told which box to fill.
		e.ForPeople = credentialForPeople(spec, missing, garbled, len(unknown) > 0)
		return nil, e
	}
	return fields, nil
}

// credentialForPeople says which of a credential form's fields are empty
// (missing) or hold what is not text (garbled), by the labels the form
// gives them (their descriptions), that fields were given the kind does
// not have (unknown), and that nothing was saved.
func credentialForPeople(spec []connector.CredentialField, missing, garbled []string, unknown bool) string {
	labels := func(names []string) string {
		var quoted []string
		for _, f := range spec {
			if slices.Contains(names, f.Name) {
				quoted = append(quoted, "“"+f.Description+"”")
			}
		}
		if len(quoted) == 1 {
			return "the field " + quoted[0]
		}
		return "the fields " + strings.Join(quoted[:len(quoted)-1], ", ") + " and " + quoted[len(quoted)-1]
	}
	var parts []string
	if unknown {
		// Only a program (the admin API) sends fields the form lacks.
		parts = append(parts, "the credential had fields this kind of site does not have")
	}
	if len(missing) > 0 {
		parts = append(parts, labels(missing)+" "+plural(len(missing), "is", "are")+" empty")
	}
	if len(garbled) > 0 {
		parts = append(parts, labels(garbled)+" "+plural(len(garbled), "has", "have")+
			" a line break or another control character in it, or bytes that are not text: paste "+plural(len(garbled), "it", "them")+" again")
	}
	return strings.Join(parts, "; ") + "; nothing was saved"
}

// verifyAPICredential asks the ERP, through the deployment's outbound
// transport, who the credential authenticates as.
func (s *Service) verifyAPICredential(ctx context.Context, site sites.Site, conn connector.Connector, fields map[string]secrets.Secret) (string, error) {
	csite, err := site.Connector()
	if err != nil {
		return "", internal(err)
	}
	auth, err := conn.APIAuthorizer(csite, fields)
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) && te.Code == toolerr.InvalidArgument {
			return "", &Error{Kind: Invalid, Message: te.Message + "; nothing was saved", Err: err}
		}
		return "", internal(fmt.Errorf("siteadmin: build %s authorizer for %s: %w", conn.Kind(), site.Slug, err))
	}
	ctx, cancel := context.WithTimeout(ctx, VerifyTimeout)
	defer cancel()
	identity, err := conn.VerifyAPICredential(ctx, csite, s.deps.HTTPClient(csite, auth))
	if err != nil {
		return "", verificationError(site, err)
	}
	return identity, nil
}

// verificationError says plainly why a credential was not saved: the ERP
// refused it (Rejected, with the connector's explanation), or the ERP could
// not be asked (Unreachable). Transport messages are written for models,
// so the person gets their own wording here.
func verificationError(site sites.Site, err error) error {
	if kind, reason, people, ok := unreachableReason(site.BaseURL, site.Kind, err); ok {
		// The tool error's code (UPSTREAM_UNAVAILABLE) is for models and
		// the log: the owner's page and the console show this message.
		e := &Error{Kind: kind, Message: "could not verify the credential: " + reason + "; nothing was saved", Err: err}
		if people != "" {
			e.ForPeople = "could not verify the credential: " + people + "; nothing was saved"
			// Invalid: an address that is not public, which only the
			// operator can allow.
			e.asksOperator = kind == Invalid
		}
		return e
	}
	te := classifyVerification(err)
	switch te.Code {
	case toolerr.AuthExpired, toolerr.PermissionDenied:
		// The connector may quote the ERP's refusal (Acumatica's "Invalid
		// credentials"), which passes through the same redaction of error
		// text as a tool error's message.
		message, _ := verificationText.RedactText(te.Message)
		message = strings.TrimSuffix(strings.TrimSpace(message), ".")
		// The connector's words are a tool error's, for a model and the
		// operator (HTTP statuses, "ask the operator"): a person pasting
		// the credential on a page is told what to check.
		people := "the ERP did not accept this credential: check that each field is copied exactly as the ERP shows it"
		if te.Code == toolerr.PermissionDenied {
			people = "the ERP did not let this credential use its API: check the roles of the user it names"
			if site.Kind == "acumatica" {
				// Acumatica refuses so only the Connected Application.
				people = "the ERP did not let this credential's Connected Application sign in: check that it uses the Resource Owner Password flow and may ask for the api scope"
			}
		}
		return &Error{Kind: Rejected, Message: message + "; nothing was saved", ForPeople: people + "; nothing was saved", Err: err}
	case toolerr.InvalidArgument:
		message := strings.TrimSuffix(strings.TrimSpace(te.Message), ".")
		// The connector's words are a tool error's, for a model and the
		// operator (the HTTP status, the ERP's own message): a person is
		// told what to check.
		e := &Error{Kind: Invalid, Message: message + "; nothing was saved", Err: err,
			ForPeople: "the ERP did not accept the request that checks this credential, so nothing was saved. Check that each field is copied exactly as the ERP shows it, and try again"}
		// A setting the ERP does not bear out (Acumatica's endpoint) is
		// named by the pages' label for it.
		if se := (*connector.SettingError)(nil); errors.As(err, &se) {
			e.Field, e.Problem = "settings."+se.Key, se.Problem
			e.ForPeople = ""
			if label := SettingLabel(e.Field); label != "" {
				e.ForPeople = label + " " + se.Problem + "; nothing was saved"
			}
		}
		return e
	}
	return internal(err)
}

// unreachableReason says why the ERP at baseURL could not be asked: an
// address the transport refuses (Invalid), or no usable answer
// (Unreachable). people is the reason for someone who is not the
// operator, when it differs (Error.ForPeople). ok is false for any other
// failure.
func unreachableReason(baseURL, kind string, err error) (k Kind, reason, people string, ok bool) {
	var forbidden *netguard.ForbiddenError
	if errors.As(err, &forbidden) {
		return Invalid, fmt.Sprintf("erpgate does not connect to the ERP at %s because %s; %s", baseURL, forbidden, PrivateHostsHint),
			privateAddress(baseURL, forbidden), true
	}
	if problem, ok := certificateRefusal(err); ok {
		return Unreachable, fmt.Sprintf("the ERP at %s answered with a TLS certificate that erpgate does not trust (it %s)", baseURL, problem), "", true
	}
	switch classifyVerification(err).Code {
	case toolerr.UpstreamTimeout:
		return Unreachable, fmt.Sprintf("the ERP at %s did not answer within %s", baseURL, VerifyTimeout), "", true
	case toolerr.UpstreamUnavailable:
		return Unreachable, fmt.Sprintf("the ERP at %s could not be reached", baseURL), "", true
	case toolerr.RateLimited:
		return Unreachable, fmt.Sprintf("the ERP at %s is limiting requests; try again later", baseURL), "", true
	case toolerr.NotFound, toolerr.UpstreamInvalidResponse, toolerr.ResponseTooLarge:
		return Unreachable, fmt.Sprintf("the ERP at %s gave an answer %s site does not give; check the base URL and the kind", baseURL, withArticle(KindName(kind))), "", true
	}
	return "", "", "", false
}

// withArticle is name after "a" or "an" ("an Acumatica").
func withArticle(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// verificationText redacts the ERP's words in a rejection, by the
// built-in rules.
var verificationText = redact.New(redact.Rules{})

// classifyVerification is toolerr.Classify, except that a raw network
// error (a connector that did not classify one) counts as unreachable.
func classifyVerification(err error) *toolerr.Error {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te
	}
	var netErr net.Error
	if errors.As(err, &netErr) && !errors.Is(err, context.DeadlineExceeded) {
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the ERP could not be reached")
	}
	return toolerr.Classify(err)
}

// RotateOAuthClientSecret replaces the secret of the site's OAuth client,
// keeping its client id: after the ERP's administrator generated a new
// secret for the same client. The site must have an oauth connection.
//
// The owner cannot rotate it while the operator has the site disabled, a
// secret they proposed before the disable included.
func (s *Service) RotateOAuthClientSecret(ctx context.Context, actor Actor, site sites.Site, secret string) (sites.Connection, error) {
	var (
		saved    sites.Connection
		clientID string
	)
	err := ownerRefused(actor, site, ownerSecretRefusal)
	if err == nil {
		saved, clientID, err = s.rotateOAuthClientSecret(ctx, partyOf(actor), site, secret)
	}
	details := map[string]any{}
	if clientID != "" {
		details["client_id"] = clientID
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionRotateOAuthSecret, details, err)
	return saved, err
}

// ownerSecretRefusal says why the owner of a site the operator disabled
// cannot give it a new client secret.
const ownerSecretRefusal = "its OAuth client secret cannot be changed until they enable it again; nothing was changed"

func (s *Service) rotateOAuthClientSecret(ctx context.Context, by sites.Party, site sites.Site, secret string) (sites.Connection, string, error) {
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return sites.Connection{}, "", invalid("paste the new client secret")
	}
	_, fields, err := s.deps.Store.GetConnection(ctx, site.ID, sites.ConnectionOAuth)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		e := newError(Conflict, err, "site %s has no OAuth client yet; add its client id and secret first", toolerr.Quote(site.Slug))
		e.ForPeople = "the site has no OAuth client yet, so there is no client secret to replace"
		return sites.Connection{}, "", e
	case err != nil:
		return sites.Connection{}, "", internal(err)
	}
	clientID := fields["client_id"].Reveal()
	saved, err := s.putOAuthConnection(ctx, by, site, map[string]string{"client_id": clientID, "client_secret": secret})
	return saved, clientID, err
}
