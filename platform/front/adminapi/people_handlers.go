package adminapi

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// personView is one ERP user who has connected to a site.
type personView struct {
	ERPUser     string    `json:"erp_user"`
	DisplayName string    `json:"display_name"`
	FirstUsedAt time.Time `json:"first_used_at"`
	LastUsedAt  time.Time `json:"last_used_at"`
	// ERPToken: erpgate holds the person's ERP tokens for the site.
	ERPToken          bool               `json:"erp_token"`
	ERPTokenExpiresAt *time.Time         `json:"erp_token_expires_at"`
	Clients           []personClientView `json:"clients"`
}

// personClientView is one MCP client a person uses on the site.
type personClientView struct {
	ClientID    string    `json:"client_id"`
	ClientName  string    `json:"client_name"`
	FirstUsedAt time.Time `json:"first_used_at"`
	LastUsedAt  time.Time `json:"last_used_at"`
	// ConsentedAt is the person's consent to this client; null: none.
	ConsentedAt *time.Time `json:"consented_at"`
	// LiveGrants are the client's active, unexpired access and refresh
	// tokens for the person, with their scopes and the last expiry.
	LiveGrants     int        `json:"live_grants"`
	GrantedScopes  []string   `json:"granted_scopes"`
	GrantsExpireAt *time.Time `json:"grants_expire_at"`
	RedirectURIs   []string   `json:"redirect_uris"`
}

type peopleList struct {
	People []personView `json:"people"`
}

// listPeople answers GET /sites/{id}/people.
func (a *API) listPeople(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	list, err := a.layer.ListPeople(c.Request().Context(), site)
	if err != nil {
		return err
	}
	out := peopleList{People: make([]personView, 0, len(list))}
	for _, p := range list {
		out.People = append(out.People, personViewOf(p))
	}
	return c.JSON(http.StatusOK, out)
}

// revokePerson answers DELETE /sites/{id}/people/{erp_user}.
func (a *API) revokePerson(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	user := c.Param("erp_user")
	// Echo matches on the escaped path when it has escapes the plain one
	// cannot show (an ERP user with a "/"), and its parameters are then
	// still escaped.
	if c.Request().URL.RawPath != "" {
		if user, err = url.PathUnescape(user); err != nil {
			return invalidRequest("the ERP user in the path is not validly escaped")
		}
	}
	if err := a.layer.RevokePerson(c.Request().Context(), siteadmin.Operator, site, user); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func personViewOf(p sites.Person) personView {
	clients := make([]personClientView, 0, len(p.Clients))
	for _, c := range p.Clients {
		clients = append(clients, personClientView{
			ClientID: c.ClientID, ClientName: c.ClientName,
			FirstUsedAt: c.FirstUsedAt.UTC(), LastUsedAt: c.LastUsedAt.UTC(),
			ConsentedAt: optionalTime(c.ConsentedAt), LiveGrants: c.LiveGrants,
			GrantedScopes: nonNil(c.GrantedScopes), GrantsExpireAt: optionalTime(c.GrantsExpireAt),
			RedirectURIs: nonNil(c.RedirectURIs),
		})
	}
	return personView{
		ERPUser: p.ERPUser, DisplayName: p.DisplayName,
		FirstUsedAt: p.FirstUsedAt.UTC(), LastUsedAt: p.LastUsedAt.UTC(),
		ERPToken: p.ERPToken, ERPTokenExpiresAt: optionalTime(p.ERPTokenExpiresAt),
		Clients: clients,
	}
}

// optionalTime is t in UTC, or nil (JSON null) when zero.
func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// nonNil keeps an empty list a JSON [] rather than null.
func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
