package adminapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/netguard"
	"github.com/erpgate/erpgate/platform/redact"
	"github.com/erpgate/erpgate/platform/secrets"
	"github.com/erpgate/erpgate/platform/sites"
	"github.com/erpgate/erpgate/platform/toolerr"
)

// verifyTimeout bounds the ERP round trips that verify a credential, so an
// unresponsive ERP gives the operator an answer rather than a hung request.
const verifyTimeout = 30 * time.Second

type putConnectionRequest struct {
	Credentials map[string]string `json:"credentials"`
}

// putConnection answers PUT /sites/{id}/connections/{type}. The credential
// is verified against the ERP first; nothing is saved unless the ERP
// accepts it.
func (a *API) putConnection(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	typ, err := connectionTypeParam(c)
	if err != nil {
		return err
	}
	if typ == sites.ConnectionOAuth {
		return a.putOAuthConnection(c, site)
	}
	var req putConnectionRequest
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	if req.Credentials == nil {
		return invalidRequest("missing required field: credentials")
	}
	conn, err := a.connectorOf(site)
	if err != nil {
		return err
	}
	fields, err := credentialFields(conn.APICredentialFields(), req.Credentials)
	if err != nil {
		return err
	}
	identity, err := a.verifyAPICredential(c.Request().Context(), site, conn, fields)
	if err != nil {
		return err
	}
	saved, err := a.deps.Store.PutVerifiedConnection(c.Request().Context(), site.ID, site.BaseURL, sites.ConnectionAPIToken, identity, fields)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return notFound("site %q was deleted while its credential was being verified; nothing was saved", site.Slug)
	case errors.Is(err, sites.ErrBaseURLChanged):
		return conflict("site %q moved to another base URL while its credential was being verified against %s; nothing was saved", site.Slug, site.BaseURL)
	case err != nil:
		return classify(err)
	}
	return c.JSON(http.StatusOK, connectionViewOf(saved))
}

// credentialFields checks the submitted credential against the connector's
// field list, reporting every missing and unknown field at once, and wraps
// the values as secrets. Surrounding white space, a common paste accident,
// is dropped.
func credentialFields(spec []connector.CredentialField, submitted map[string]string) (map[string]secrets.Secret, error) {
	expected := make([]string, 0, len(spec))
	fields := make(map[string]secrets.Secret, len(spec))
	var missing, unknown []string
	for _, f := range spec {
		expected = append(expected, f.Name)
		value := strings.TrimSpace(submitted[f.Name])
		if value == "" {
			missing = append(missing, f.Name)
			continue
		}
		fields[f.Name] = secrets.Secret(value)
	}
	for name := range submitted {
		if !slices.Contains(expected, name) {
			unknown = append(unknown, fmt.Sprintf("%q", name))
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
	if len(problems) > 0 {
		return nil, invalidRequest("%s (this kind of site expects: %s)", strings.Join(problems, "; "), strings.Join(expected, ", "))
	}
	return fields, nil
}

// verifyAPICredential asks the ERP, through the deployment's outbound
// transport, who the credential authenticates as.
func (a *API) verifyAPICredential(ctx context.Context, site sites.Site, conn connector.Connector, fields map[string]secrets.Secret) (string, error) {
	csite, err := site.Connector()
	if err != nil {
		return "", internal(err)
	}
	auth, err := conn.APIAuthorizer(csite, fields)
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) && te.Code == toolerr.InvalidArgument {
			return "", &apiError{Status: http.StatusBadRequest, Code: codeInvalidRequest, Message: te.Message + "; nothing was saved", Err: err}
		}
		return "", internal(fmt.Errorf("adminapi: build %s authorizer for %s: %w", conn.Kind(), site.Slug, err))
	}
	ctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	identity, err := conn.VerifyAPICredential(ctx, csite, a.deps.HTTPClient(csite, auth))
	if err != nil {
		// The audit line records the outcome; the envelope logs the cause
		// when the ERP could not be asked.
		return "", verificationError(site, err)
	}
	return identity, nil
}

// verificationError says plainly why a credential was not saved: the ERP
// refused it (422 credential_rejected, with the connector's explanation), or
// the ERP could not be asked (502 upstream_unreachable). Transport messages
// are written for models, so the operator gets its own wording here.
func verificationError(site sites.Site, err error) error {
	var forbidden *netguard.ForbiddenError
	if errors.As(err, &forbidden) {
		return &apiError{Status: http.StatusBadRequest, Code: codeInvalidRequest,
			Message: fmt.Sprintf("could not verify the credential: erpgate does not connect to the ERP at %s because %s; %s; nothing was saved",
				site.BaseURL, forbidden, privateHostsHint), Err: err}
	}
	te := classifyVerification(err)
	unreachable := func(reason string) error {
		return &apiError{Status: http.StatusBadGateway, Code: codeUpstreamUnreachable,
			Message: fmt.Sprintf("could not verify the credential: %s (%s); nothing was saved", reason, te.Code), Err: err}
	}
	switch te.Code {
	case toolerr.AuthExpired, toolerr.PermissionDenied:
		// The connector may quote the ERP's refusal (Acumatica's "Invalid
		// credentials"), which passes through the same redaction of error
		// text as a tool error's message.
		message, _ := verificationText.RedactText(te.Message)
		message = strings.TrimSuffix(strings.TrimSpace(message), ".")
		return &apiError{Status: http.StatusUnprocessableEntity, Code: codeCredentialRejected,
			Message: message + "; nothing was saved", Err: err}
	case toolerr.InvalidArgument:
		message := strings.TrimSuffix(strings.TrimSpace(te.Message), ".")
		return &apiError{Status: http.StatusBadRequest, Code: codeInvalidRequest, Message: message + "; nothing was saved", Err: err}
	case toolerr.UpstreamTimeout:
		return unreachable(fmt.Sprintf("the ERP at %s did not answer within %s", site.BaseURL, verifyTimeout))
	case toolerr.UpstreamUnavailable:
		return unreachable(fmt.Sprintf("the ERP at %s could not be reached", site.BaseURL))
	case toolerr.RateLimited:
		return unreachable(fmt.Sprintf("the ERP at %s is limiting requests; try again later", site.BaseURL))
	case toolerr.NotFound, toolerr.UpstreamInvalidResponse, toolerr.ResponseTooLarge:
		return unreachable(fmt.Sprintf("the ERP at %s gave an answer a %s site does not give; check the base URL and the kind", site.BaseURL, site.Kind))
	}
	return internal(err)
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

// deleteConnection answers DELETE /sites/{id}/connections/{type}.
func (a *API) deleteConnection(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	typ, err := connectionTypeParam(c)
	if err != nil {
		return err
	}
	if err := a.deps.Store.DeleteConnection(c.Request().Context(), site.ID, typ); err != nil {
		if errors.Is(err, sites.ErrNotFound) {
			return notFound("site %q has no %s connection", site.Slug, typ)
		}
		return internal(err)
	}
	return c.NoContent(http.StatusNoContent)
}

// connectionTypeParam reads the :type path parameter.
func connectionTypeParam(c echo.Context) (sites.ConnectionType, error) {
	typ := sites.ConnectionType(c.Param("type"))
	if !typ.Valid() {
		names := make([]string, len(sites.ConnectionTypes))
		for i, t := range sites.ConnectionTypes {
			names[i] = string(t)
		}
		return "", notFound("unknown connection type %q; use one of: %s", c.Param("type"), strings.Join(names, ", "))
	}
	return typ, nil
}
