package console

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/web/pagekit"
)

// pageSet holds the console's own pages.
type pageSet struct {
	sites *pagekit.Page
}

func (c *Console) parsePages() {
	c.nav = append(c.nav, NavItem{"Sites", "/console/sites"})
	c.pages.sites = c.kit.MustParse(files, "templates/sites.html")
}

func (c *Console) registerPages(e *echo.Echo) {
	e.GET("/console/sites", echo.WrapHandler(c.Guard(http.HandlerFunc(c.sitesPage))))
}

func (c *Console) sitesPage(w http.ResponseWriter, r *http.Request) {
	c.Render(w, r, http.StatusOK, c.pages.sites, "", nil)
}
