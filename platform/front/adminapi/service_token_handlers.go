package adminapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
)

type issueServiceTokenRequest struct {
	Name string `json:"name"`
	// ExpiresInDays is the token's lifetime; nil (left out or null):
	// it never expires.
	ExpiresInDays *int `json:"expires_in_days"`
}

type serviceTokenList struct {
	ServiceTokens []serviceTokenView `json:"service_tokens"`
	// Next is the after of the next page, an opaque cursor, NextURL the
	// same query with it; both null on the last page.
	Next    *string `json:"next"`
	NextURL *string `json:"next_url"`
}

// maxServiceTokenPage is the most tokens one answer lists, and how many
// it lists unless asked for fewer: revoked and expired tokens stay rows,
// so a site's list has no other bound.
const maxServiceTokenPage = 500

// issueServiceToken answers POST /sites/{id}/service-tokens. The response
// is the only place the token's value ever appears.
func (a *API) issueServiceToken(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	var req issueServiceTokenRequest
	if err := decodeBody(c, &req, true); err != nil {
		return err
	}
	lifetimeDays := 0
	if req.ExpiresInDays != nil {
		// 0 is how the layer says "never"; asked for, it is a mistake.
		if *req.ExpiresInDays < 1 || *req.ExpiresInDays > sites.MaxServiceTokenLifetimeDays {
			return invalidRequest("expires_in_days must be between 1 and %d; leave it out for a token that never expires", sites.MaxServiceTokenLifetimeDays)
		}
		lifetimeDays = *req.ExpiresInDays
	}
	st, value, err := a.layer.IssueServiceToken(c.Request().Context(), siteadmin.Operator, site, req.Name, lifetimeDays)
	switch {
	case errors.Is(err, sites.ErrNoAPIConnection):
		connectionPath := strings.Replace(strings.TrimSuffix(c.Path(), "/service-tokens"), ":id", site.Slug, 1) + "/connections/api_token"
		return conflict("site %s has no api_token connection; add one with PUT %s before issuing service tokens", toolerr.Quote(site.Slug), connectionPath)
	case err != nil:
		return err
	}
	return c.JSON(http.StatusCreated, issuedServiceTokenView{
		ID:        st.ID,
		Name:      st.Name,
		Prefix:    st.Prefix,
		CreatedAt: st.CreatedAt.UTC(),
		ExpiresAt: utcPtr(st.ExpiresAt),
		Expired:   st.Expired,
		Token:     value.Reveal(),
	})
}

// listServiceTokens answers GET /sites/{id}/service-tokens.
func (a *API) listServiceTokens(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	limit := maxServiceTokenPage
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxServiceTokenPage {
			return invalidRequest("limit must be a whole number from 1 to %d", maxServiceTokenPage)
		}
		limit = n
	}
	list, next, err := a.layer.ListServiceTokensPage(c.Request().Context(), site, c.QueryParam("after"), limit)
	if err != nil {
		return err
	}
	out := serviceTokenList{ServiceTokens: make([]serviceTokenView, 0, len(list))}
	for _, t := range list {
		out.ServiceTokens = append(out.ServiceTokens, serviceTokenViewOf(t))
	}
	if next != "" {
		cur := next
		q := c.Request().URL.Query()
		q.Set("after", cur)
		u := a.deps.PublicURL(c.Request().URL.Path) + "?" + q.Encode()
		out.Next, out.NextURL = &cur, &u
	}
	return c.JSON(http.StatusOK, out)
}

// revokeServiceToken answers DELETE /sites/{id}/service-tokens/{token_id}.
func (a *API) revokeServiceToken(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	tokenID, perr := uuid.Parse(c.Param("token_id"))
	if perr != nil {
		tokenID = uuid.Nil
	}
	if err := a.layer.RevokeServiceToken(c.Request().Context(), siteadmin.Operator, site, tokenID, c.Param("token_id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
