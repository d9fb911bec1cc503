package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/web/pagekit"
)

// ToolsPath is the tool reference: every connector's tools, as the
// engine serves them. DocsPath leads there.
const (
	ToolsPath = "/docs/tools"
	DocsPath  = "/docs"
)

// ToolKind is one connector's catalogue, for the tool reference.
type ToolKind struct {
	Kind  string
	Tools []ToolDoc
}

// ToolDoc is one tool: its name, effect (read, write or destructive), the
// first sentence of its description as its purpose, the whole description
// and its arguments by name.
type ToolDoc struct {
	Name        string
	Effect      string
	Purpose     string
	Description string
	Args        []ArgDoc
}

// ArgDoc is one argument of a tool; Description includes its allowed
// values and its default.
type ArgDoc struct {
	Name        string
	Type        string
	Required    bool
	Description string
}

// toolsPage is what the tool reference shows: the catalogue, its
// descriptions cut into text and code.
type toolsPage struct {
	Kinds []kindView
}

type kindView struct {
	Kind  string
	Tools []toolView
}

type toolView struct {
	Name, Effect string
	Purpose      []span
	Description  []span
	Args         []argView
}

type argView struct {
	Name, Type  string
	Required    bool
	Description []span
}

func toolsView(kinds []ToolKind) toolsPage {
	var p toolsPage
	for _, k := range kinds {
		kv := kindView{Kind: k.Kind}
		for _, t := range k.Tools {
			tv := toolView{Name: t.Name, Effect: t.Effect, Purpose: spans(t.Purpose), Description: spans(t.Description)}
			for _, a := range t.Args {
				tv.Args = append(tv.Args, argView{Name: a.Name, Type: a.Type, Required: a.Required, Description: spans(a.Description)})
			}
			kv.Tools = append(kv.Tools, tv)
		}
		p.Kinds = append(p.Kinds, kv)
	}
	return p
}

// span is a piece of a description: plain text, or a code span (the
// descriptions mark code with backticks, as docs/tools.md shows it).
type span struct {
	Text string
	Code bool
}

// spans cuts s at its backticks: every second piece is code. An unpaired
// backtick is kept as text.
func spans(s string) []span {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 {
		// Odd number of backticks: the last one opens nothing.
		last := len(parts) - 1
		parts[last-1] += "`" + parts[last]
		parts = parts[:last]
	}
	out := make([]span, 0, len(parts))
	for i, p := range parts {
		if p != "" {
			out = append(out, span{Text: p, Code: i%2 == 1})
		}
	}
	return out
}

// registerTools mounts the tool reference. Every site of a kind offers at
// most these tools; which ones a site offers is its own setting, so the page
// names no site. The catalogue is fixed for the life of the process, so the
// page (some 200 KB) is rendered once, not for every anonymous request.
func registerTools(e *echo.Echo, kit *pagekit.Kit, kinds []ToolKind) {
	page, err := kit.RenderBody(kit.MustParse(pageFiles, "templates/tools.html"), toolsView(kinds))
	if err != nil {
		// The template and its data are erpgate's own: a failure is a bug.
		panic(fmt.Sprintf("web: render the tool reference: %v", err))
	}
	e.GET(ToolsPath, func(c echo.Context) error {
		h := c.Response().Header()
		kit.SetHeaders(h, pagekit.Options{})
		return c.Blob(http.StatusOK, h.Get("Content-Type"), page)
	})
	e.GET(DocsPath, func(c echo.Context) error {
		return c.Redirect(http.StatusSeeOther, kit.URL(ToolsPath))
	})
}
