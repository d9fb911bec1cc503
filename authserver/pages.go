package authserver

import (
	"html/template"
	"net/http"
)

// pageHeaders are the headers of every sign-in page: no framing (no
// clickjacking of the consent button), no caching, no sniffing. formAction
// lists where the page's forms may go, redirects included (CSP applies
// form-action to the redirect that answers a form post).
func pageHeaders(h http.Header, formAction string) {
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; frame-ancestors 'none'; form-action "+formAction)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin keeps Origin on our own form posts (no-referrer would
	// turn it into "null").
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
}

func (s *Server) renderPage(w http.ResponseWriter, status int, tmpl *template.Template, formAction string, data any) {
	if formAction == "" {
		formAction = "'none'"
	}
	pageHeaders(w.Header(), formAction)
	w.WriteHeader(status)
	if err := tmpl.Execute(w, data); err != nil {
		s.log.Warn("render sign-in page")
	}
}

// messagePage is an error or information page.
type messagePage struct {
	Title   string
	Message string
	// Details are shown as a list (likely causes of a configuration error).
	Details []string
	Hint    string
}

func (s *Server) renderMessage(w http.ResponseWriter, status int, p messagePage) {
	s.renderPage(w, status, messageTemplate, "", p)
}

// consentPage is the data of the consent page.
type consentPage struct {
	FlowID, CSRF  string
	ClientName    string
	RedirectHost  string
	SiteName      string
	UserName      string
	ConsentAction string
}

// chooseSitePage is the data of the /mcp page where the user types their
// ERP's address.
type chooseSitePage struct {
	FlowID, CSRF string
	ERPURL       string
	Tenant       string
	AskTenant    bool
	Error        string
	Action       string
}

const pageStyle = `<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1d2330}
h1{font-size:1.5rem}ul{padding-left:1.2rem}.box{border:1px solid #d6dae3;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
button{font-size:1rem;padding:.55rem 1.1rem;border-radius:6px;border:1px solid #2a4db3;background:#2a4db3;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#2a4db3}input{font-size:1rem;padding:.45rem;width:100%;box-sizing:border-box}
label{display:block;margin:.8rem 0 .3rem}.error{color:#a11;font-weight:600}small{color:#5a6272}</style>`

var messageTemplate = template.Must(template.New("message").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} — erpgate</title>` + pageStyle + `</head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p>
{{if .Details}}<div class="box"><p>Likely causes:</p><ul>{{range .Details}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
{{if .Hint}}<p><small>{{.Hint}}</small></p>{{end}}
</body></html>`))

var consentTemplate = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Allow {{.ClientName}} to read {{.SiteName}}? — erpgate</title>` + pageStyle + `</head>
<body>
<h1>Allow <em>{{.ClientName}}</em> to read {{.SiteName}} as you?</h1>
<p>You are signed in to {{.SiteName}} as <strong>{{.UserName}}</strong>. The AI client <strong>{{.ClientName}}</strong>, which will receive the answers at <strong>{{.RedirectHost}}</strong>, is asking to use erpgate on your behalf.</p>
<div class="box"><ul>
<li>Data from your ERP will be sent to an AI model for processing, with exactly the permissions you have in the ERP.</li>
<li>All data access is logged for audit purposes.</li>
<li>Sensitive fields (bank accounts, tax ids, salaries, passwords and the like) are automatically redacted before they reach the AI.</li>
<li>AI answers can be wrong: check important figures in the ERP before acting on them.</li>
</ul></div>
<form method="post" action="{{.ConsentAction}}">
<input type="hidden" name="flow" value="{{.FlowID}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<button type="submit" name="decision" value="accept">I understand — continue</button>
<button type="submit" name="decision" value="deny" class="secondary">Cancel</button>
</form>
<p><small>Only continue if you started connecting {{.ClientName}} yourself just now.</small></p>
</body></html>`))

var chooseSiteTemplate = template.Must(template.New("choose").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in to your ERP — erpgate</title>` + pageStyle + `</head>
<body>
<h1>Which ERP do you use?</h1>
<p>Type the address you use to open your ERP in the browser. You will sign in there with your own account.</p>
{{if .Error}}<p class="error">{{.Error}}</p>{{end}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="flow" value="{{.FlowID}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<label for="erp_url">ERP address</label>
<input id="erp_url" name="erp_url" type="url" required placeholder="https://erp.example.com" value="{{.ERPURL}}">
{{if .AskTenant}}<label for="tenant">Company or tenant name (as on your ERP's sign-in page)</label>
<input id="tenant" name="tenant" value="{{.Tenant}}">{{end}}
<p><button type="submit">Continue</button></p>
</form>
</body></html>`))
