// Package clientsetup is the one description of how to add an erpgate MCP
// URL to each AI client: the landing page and the registration's result
// page show it as HTML with the URL filled in, and the README's "Connect a
// client" list is generated from it (TestREADMEIsGenerated keeps them the
// same; ERPGATE_UPDATE_README=1 rewrites the README).
package clientsetup

import (
	"html/template"
	"strings"
)

// part is a piece of a step: text, emphasis (a menu item or button),
// inline code, the MCP URL, or a code block.
type part struct {
	text, em, code string
	url            bool
	block          *block
}

type block struct {
	lang string
	// text may hold {{URL}}.
	text string
}

func t(s string) part    { return part{text: s} }
func em(s string) part   { return part{em: s} }
func code(s string) part { return part{code: s} }

// u is the MCP URL, as inline code.
var u = part{url: true}

// codeURL is inline code with the URL in it at {{URL}}.
func codeURL(s string) part { return part{code: s, url: true} }

func pre(lang, s string) part { return part{block: &block{lang: lang, text: s}} }

// Client is one AI client's set-up.
type client struct {
	name  string
	parts []part
}

var clients = []client{
	{"Claude (claude.ai, Claude Desktop)", []part{
		t("Settings → Connectors → "), em("Add custom connector"), t(". Name it, paste "), u,
		t(", leave the OAuth client fields empty, "), em("Add"), t(", then "), em("Connect"),
		t(": a browser window opens at your ERP's sign-in, then erpgate's consent page. On Team and Enterprise plans an owner adds the connector once under organisation settings and each member connects with their own sign-in."),
	}},
	{"Claude Code", []part{
		codeURL("claude mcp add --transport http erp {{URL}}"), t(", then run "), code("/mcp"), t(" in Claude Code, pick "), code("erp"),
		t(" and "), em("Authenticate"), t("."),
	}},
	{"ChatGPT", []part{
		t("Settings → Apps & Connectors → "), em("Advanced settings"), t(": turn on developer mode; then "), em("Create"),
		t(" (or "), em("Add connector"), t("): name it, MCP server URL "), u, t(", authentication "), em("OAuth"),
		t(", confirm, and sign in when asked. Workspace admins can publish it for their workspace."),
	}},
	{"Codex CLI and the Codex app", []part{
		t("in "), code("~/.codex/config.toml"),
		pre("toml", "[mcp_servers.erp]\nurl = \"{{URL}}\""),
		t("then "), code("codex mcp login erp"), t(" (a browser opens for the ERP sign-in) and "), code("codex mcp list"),
		t(" to check it shows as logged in. Equivalent: "), codeURL("codex mcp add erp --url {{URL}}"), t("."),
	}},
	{"VS Code (Copilot agent mode)", []part{
		t("Command Palette → "), em("MCP: Add Server…"), t(" → "), em("HTTP"), t(", paste the URL; or in "), code(".vscode/mcp.json"),
		pre("json", `{ "servers": { "erp": { "type": "http", "url": "{{URL}}" } } }`),
		t("Start the server from the file or the MCP view; VS Code asks to allow the sign-in and opens the browser."),
	}},
}

func fill(s, mcpURL string) string { return strings.ReplaceAll(s, "{{URL}}", mcpURL) }

// HTML is the set-up of every client for mcpURL, as a list for a page.
func HTML(mcpURL string) template.HTML {
	var b strings.Builder
	esc := template.HTMLEscapeString
	b.WriteString(`<ul class="steps clients">` + "\n")
	for _, c := range clients {
		b.WriteString("<li><strong>" + esc(c.name) + ":</strong> ")
		for _, p := range c.parts {
			switch {
			case p.block != nil:
				b.WriteString("\n<pre><code>" + esc(fill(p.block.text, mcpURL)) + "</code></pre>\n")
			case p.url && p.code == "":
				b.WriteString("<code>" + esc(mcpURL) + "</code>")
			case p.code != "":
				b.WriteString("<code>" + esc(fill(p.code, mcpURL)) + "</code>")
			case p.em != "":
				b.WriteString("<em>" + esc(p.em) + "</em>")
			default:
				b.WriteString(esc(p.text))
			}
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>")
	return template.HTML(b.String()) //nolint:gosec // every piece is escaped above
}

// Markdown is the same list as Markdown, for the README.
func Markdown(mcpURL string) string {
	var b strings.Builder
	for _, c := range clients {
		b.WriteString("- **" + c.name + ":** ")
		for i, p := range c.parts {
			switch {
			case p.block != nil:
				b.WriteString("\n  ```" + p.block.lang + "\n")
				for _, line := range strings.Split(fill(p.block.text, mcpURL), "\n") {
					b.WriteString("  " + line + "\n")
				}
				b.WriteString("  ```")
				if i+1 < len(c.parts) {
					b.WriteString("\n  ")
				}
			case p.url && p.code == "":
				b.WriteString("`" + mcpURL + "`")
			case p.code != "":
				b.WriteString("`" + fill(p.code, mcpURL) + "`")
			case p.em != "":
				b.WriteString("*" + p.em + "*")
			default:
				b.WriteString(p.text)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
