// Package viewer is the console's usage and audit viewer: /console/usage
// (usage events with charts) and /console/audit (sign-in and
// administration events), each with a filter form sent by GET so that a
// filtered view is a link, keyset pages, and a CSV export of everything the
// filters select. It reads through platform/store/activity and sits behind the
// console's guard.
package viewer

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/store/activity"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// Shell is what the viewer needs of the console (web/console.Console).
type Shell interface {
	Guard(next http.Handler) http.Handler
	Kit() *pagekit.Kit
	Render(w http.ResponseWriter, r *http.Request, status int, page *pagekit.Page, flash string, data any)
	AddNav(label, path string)
}

// Deps is what the viewer reads.
type Deps struct {
	Shell  Shell
	Events *activity.Store
	Sites  *sites.Store
	Logger *zap.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// PageSize is the number of events a page shows.
const PageSize = 50

// Paths of the viewer.
const (
	UsagePath       = "/console/usage"
	UsageExportPath = "/console/usage.csv"
	AuditPath       = "/console/audit"
	AuditExportPath = "/console/audit.csv"
)

//go:embed templates/*.html
var files embed.FS

// Viewer serves the pages.
type Viewer struct {
	deps         Deps
	kit          *pagekit.Kit
	usage, audit *pagekit.Page
	log          *zap.Logger
}

// New builds the viewer and adds its pages to the console's navigation.
// It panics on a wiring mistake.
func New(d Deps) *Viewer {
	if d.Shell == nil || d.Events == nil || d.Sites == nil {
		panic("viewer: New: Shell, Events and Sites are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	kit, err := d.Shell.Kit().WithPartials(files, "templates/filters.html")
	if err != nil {
		panic(err)
	}
	v := &Viewer{deps: d, kit: kit, log: d.Logger.Named("viewer")}
	v.usage = kit.MustParse(files, "templates/usage.html")
	v.audit = kit.MustParse(files, "templates/audit.html")
	d.Shell.AddNav("Usage", UsagePath)
	d.Shell.AddNav("Audit", AuditPath)
	return v
}

// Register mounts the pages on e, behind the console's guard.
func (v *Viewer) Register(e *echo.Echo) {
	for path, h := range map[string]http.HandlerFunc{
		UsagePath: v.usagePage, UsageExportPath: v.usageExport,
		AuditPath: v.auditPage, AuditExportPath: v.auditExport,
	} {
		e.GET(path, echo.WrapHandler(v.deps.Shell.Guard(h)))
	}
}

// Handler serves the pages without the guard, for the benchmark, which
// times query and render.
func (v *Viewer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+UsagePath, v.usagePage)
	mux.HandleFunc("GET "+AuditPath, v.auditPage)
	return mux
}

// request is a page's query, read and resolved.
type request struct {
	parsed   activity.Parsed
	problems []string
	step     time.Duration
	stepName string
}

// read parses the query and resolves the site slug. Problems are for the
// person; err is erpgate's.
func (v *Viewer) read(ctx context.Context, q url.Values, outcomes []string, charts bool) (request, error) {
	var req request
	p, err := activity.ParseQuery(q, v.deps.Now(), outcomes)
	var qe *activity.QueryError
	if errors.As(err, &qe) {
		req.problems = qe.Problems
		return req, nil
	}
	req.parsed = p
	if p.Site != "" {
		site, err := v.deps.Sites.GetSiteBySlug(ctx, p.Site)
		switch {
		case errors.Is(err, sites.ErrNotFound) || sites.ValidateSlug(p.Site) != nil:
			req.problems = append(req.problems, "No site is named "+toolerr.Quote(p.Site)+".")
		case err != nil:
			return req, err
		default:
			req.parsed.Filter.SiteID = site.ID
		}
	}
	if charts {
		span := p.Filter.To.Sub(p.Filter.From)
		switch q.Get("step") {
		case "hour":
			req.step, req.stepName = time.Hour, "hour"
		case "day":
			req.step, req.stepName = 24*time.Hour, "day"
		case "":
			req.step, req.stepName = time.Hour, "hour"
			if span > 3*24*time.Hour {
				req.step, req.stepName = 24*time.Hour, "day"
			}
		default:
			req.problems = append(req.problems, "Chart by hour or by day.")
		}
		if req.step > 0 && span/req.step > activity.MaxBuckets-2 {
			req.problems = append(req.problems, "The time range is too long to chart by hour; chart it by day or choose a shorter range.")
		}
		if span > 400*24*time.Hour {
			req.problems = append(req.problems, "Choose a time range of at most 400 days.")
		}
	}
	return req, nil
}

// formView prefills the filter form.
type formView struct {
	Action                                          string
	From, To                                        string
	Site, ERPUser, Tool, Outcome, ErrorCode, Client string
	Step                                            string
	Sites                                           []option
	Outcomes                                        []option
	Steps                                           []option
	// ToolLabel and CodeLabel name the tool and code fields (the audit
	// calls them event and reason).
	ToolLabel, CodeLabel string
	// Redactions offers the redaction filter (usage only).
	Redactions []option
	// Events offers the audit's events and actions by their words; the
	// usage page's tool is typed.
	Events []option
	// Codes offers the error codes (usage) or reasons (audit) with their
	// words, valued by the stored code.
	Codes []option
	// RequestID is the request id filter (usage only); Usage says the page
	// offers it.
	RequestID string
	Usage     bool
}

type option struct {
	Value, Label string
	Selected     bool
}

// localInput is a time as a datetime-local field shows it, in UTC.
func localInput(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04")
}

func (v *Viewer) form(ctx context.Context, action string, q url.Values, req request, outcomes []string) formView {
	f := formView{
		Action: v.kit.URL(action),
		From:   q.Get(activity.ParamFrom), To: q.Get(activity.ParamTo),
		Site: q.Get(activity.ParamSite), ERPUser: q.Get(activity.ParamERPUser), Tool: q.Get(activity.ParamTool),
		Outcome: q.Get(activity.ParamOutcome), ErrorCode: q.Get(activity.ParamErrorCode), Client: q.Get(activity.ParamClient),
		Step: req.stepName,
	}
	if len(req.problems) == 0 {
		f.From, f.To = localInput(req.parsed.Filter.From), localInput(req.parsed.Filter.To)
	}
	f.Sites = []option{{Value: "", Label: "Every site", Selected: f.Site == ""}}
	list, err := v.deps.Sites.ListSites(ctx)
	if err != nil {
		v.log.Warn("list sites for the viewer's form", zap.Error(err))
	}
	known := false
	for _, s := range list {
		f.Sites = append(f.Sites, option{Value: s.Slug, Label: s.Slug, Selected: s.Slug == f.Site})
		known = known || s.Slug == f.Site
	}
	if f.Site != "" && !known {
		f.Sites = append(f.Sites, option{Value: f.Site, Label: f.Site + " (no such site)", Selected: true})
	}
	f.Outcomes = []option{{Value: "", Label: "Any outcome", Selected: f.Outcome == ""}}
	for _, o := range outcomes {
		f.Outcomes = append(f.Outcomes, option{Value: o, Label: o, Selected: o == f.Outcome})
	}
	f.Steps = []option{{Value: "hour", Label: "By hour", Selected: f.Step == "hour"}, {Value: "day", Label: "By day", Selected: f.Step == "day"}}
	return f
}

// links are the page's navigation through the results.
type links struct {
	Next, First, Export string
}

func (v *Viewer) links(path, export string, req request, next *activity.Cursor, stepName string) links {
	vals := activity.Values(req.parsed.Filter, req.parsed.Site)
	if stepName != "" {
		vals.Set("step", stepName)
	}
	l := links{Export: v.kit.URL(export) + "?" + vals.Encode()}
	if req.parsed.After != nil {
		l.First = v.kit.URL(path) + "?" + vals.Encode()
	}
	if next != nil {
		vals.Set(activity.ParamAfter, next.String())
		l.Next = v.kit.URL(path) + "?" + vals.Encode()
	}
	return l
}

// filterLink is the page's query with one more filter: the cells of the
// table link to the events like them.
func (v *Viewer) filterLink(path string, req request, param, value string) string {
	if value == "" {
		return ""
	}
	vals := activity.Values(req.parsed.Filter, req.parsed.Site)
	vals.Set(param, value)
	return v.kit.URL(path) + "?" + vals.Encode()
}

// usageRow is one event as the table shows it.
type usageRow struct {
	ID                                                        int64
	At, Site, SiteLink, ERPUser, UserLink, Client, ClientLink string
	What, ToolLink, Outcome, Code, CodeWords, CodeLink, Auth  string
	// RequestID is the id the reply carried as X-Request-Id.
	RequestID         string
	DurationMS, ERPMS string
	Failed            bool
	// Redacted says what redaction took out of the result: "3 values
	// redacted: data[].tax_id".
	Redacted string
}

type usageView struct {
	Form     formView
	Problems []string
	Range    string
	Events   []usageRow
	Links    links
	Charts   []chartView
	Note     string
}

func (v *Viewer) usagePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	req, err := v.read(ctx, q, activity.UsageOutcomes, true)
	if err != nil {
		v.unavailable(w, err)
		return
	}
	view := usageView{Form: v.form(ctx, UsagePath, q, req, activity.UsageOutcomes), Problems: req.problems}
	redacted := q.Get(activity.ParamRedacted)
	view.Form.Redactions = []option{{Value: "", Label: "Any call", Selected: redacted != "yes"}, {Value: "yes", Label: "Only calls with values redacted", Selected: redacted == "yes"}}
	view.Form.Usage, view.Form.RequestID = true, q.Get(activity.ParamRequestID)
	view.Form.Codes = codeChoices(view.Form.ErrorCode)
	if len(req.problems) > 0 {
		v.deps.Shell.Render(w, r, http.StatusBadRequest, v.usage, "", view)
		return
	}
	f := req.parsed.Filter
	var (
		page  activity.UsagePage
		stats activity.Stats
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { page, err = v.deps.Events.Usage(gctx, f, req.parsed.After, PageSize); return })
	g.Go(func() (err error) { stats, err = v.deps.Events.Stats(gctx, f, req.step); return })
	if err := g.Wait(); err != nil {
		v.unavailable(w, err)
		return
	}
	view.Range = rangeText(f.From, f.To)
	for _, e := range page.Events {
		row := usageRow{
			ID: e.ID, At: e.OccurredAt.Format("2006-01-02 15:04:05"), Site: e.SiteSlug, ERPUser: e.ERPUser, Client: e.ClientID,
			What: e.Method, Outcome: e.Outcome, Code: e.ErrorCode, CodeWords: codeWord(e.ErrorCode), Auth: authWords(e.AuthType), RequestID: e.RequestID,
			DurationMS: fmt.Sprint(e.DurationMS), Failed: e.Outcome != "success",
		}
		if e.Tool != "" {
			row.What = e.Tool
			row.ToolLink = v.filterLink(UsagePath, req, activity.ParamTool, e.Tool)
		}
		if e.HasERPMS {
			row.ERPMS = fmt.Sprint(e.ERPMS)
		}
		if e.RedactedCount > 0 {
			row.Redacted = fmt.Sprintf("%d %s redacted: %s", e.RedactedCount, plural(e.RedactedCount, "value", "values"), e.RedactedFields)
		}
		if e.SiteID != uuid.Nil && req.parsed.Site == "" {
			row.SiteLink = v.filterLink(UsagePath, req, activity.ParamSite, e.SiteSlug)
		}
		row.UserLink = v.filterLink(UsagePath, req, activity.ParamERPUser, e.ERPUser)
		row.ClientLink = v.filterLink(UsagePath, req, activity.ParamClient, e.ClientID)
		row.CodeLink = v.filterLink(UsagePath, req, activity.ParamErrorCode, e.ErrorCode)
		view.Events = append(view.Events, row)
	}
	view.Links = v.links(UsagePath, UsageExportPath, req, page.Next, req.stepName)
	view.Charts = charts(stats)
	view.Note = fmt.Sprintf("The charts count tool calls by %s, from %s to %s UTC (whole %ss).", req.stepName,
		stats.From.Format("2 Jan 2006 15:04"), stats.To.Format("2 Jan 2006 15:04"), req.stepName)
	v.deps.Shell.Render(w, r, http.StatusOK, v.usage, "", view)
}

// auditRow is one audit event as the table shows it.
type auditRow struct {
	Key                                                             string
	At, Source, Site, SiteLink, Event, EventLink, ERPUser, UserLink string
	Client, ClientLink, Actor, Outcome, Reason, ReasonLink          string
	Failed                                                          bool
}

type auditView struct {
	Form     formView
	Problems []string
	Range    string
	Events   []auditRow
	Links    links
}

func (v *Viewer) auditPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	req, err := v.read(ctx, q, activity.AuditOutcomes, false)
	if err != nil {
		v.unavailable(w, err)
		return
	}
	form := v.form(ctx, AuditPath, q, req, activity.AuditOutcomes)
	form.ToolLabel, form.CodeLabel = "Event or action", "Reason"
	form.Events = eventChoices(form.Tool)
	form.Codes = reasonChoices(form.ErrorCode)
	view := auditView{Form: form, Problems: req.problems}
	if len(req.problems) > 0 {
		v.deps.Shell.Render(w, r, http.StatusBadRequest, v.audit, "", view)
		return
	}
	f := req.parsed.Filter
	page, err := v.deps.Events.Audit(ctx, f, req.parsed.After, PageSize)
	if err != nil {
		v.unavailable(w, err)
		return
	}
	view.Range = rangeText(f.From, f.To)
	for _, e := range page.Events {
		row := auditRow{
			Key: fmt.Sprintf("%d-%d", e.Source, e.ID), At: e.OccurredAt.Format("2006-01-02 15:04:05"), Source: e.SourceName(), Site: e.SiteSlug,
			Event: eventWord(e.Event), ERPUser: e.ERPUser, Client: e.ClientID, Actor: actorWords(e.ActorKind, e.Actor),
			Outcome: e.Outcome, Failed: e.Outcome != "success",
		}
		if e.Repeats > 1 {
			// A minute's refusals of anonymous visitors, counted in one row.
			row.Outcome += fmt.Sprintf(", %d times in this minute", e.Repeats)
		}
		switch {
		case e.Sentence != "":
			row.Reason = e.Sentence
		case e.Reason != "":
			row.Reason = reasonWord(e.Reason)
		}
		if req.parsed.Site == "" {
			row.SiteLink = v.filterLink(AuditPath, req, activity.ParamSite, e.SiteSlug)
		}
		row.EventLink = v.filterLink(AuditPath, req, activity.ParamTool, e.Event)
		row.UserLink = v.filterLink(AuditPath, req, activity.ParamERPUser, e.ERPUser)
		row.ClientLink = v.filterLink(AuditPath, req, activity.ParamClient, e.ClientID)
		row.ReasonLink = v.filterLink(AuditPath, req, activity.ParamErrorCode, e.Reason)
		view.Events = append(view.Events, row)
	}
	view.Links = v.links(AuditPath, AuditExportPath, req, page.Next, "")
	v.deps.Shell.Render(w, r, http.StatusOK, v.audit, "", view)
}

func (v *Viewer) usageExport(w http.ResponseWriter, r *http.Request) {
	v.export(w, r, activity.UsageOutcomes, "erpgate-usage.csv", v.deps.Events.ExportUsage)
}

func (v *Viewer) auditExport(w http.ResponseWriter, r *http.Request) {
	v.export(w, r, activity.AuditOutcomes, "erpgate-audit.csv", v.deps.Events.ExportAudit)
}

// export streams the CSV of everything the filters select. Bad filters
// get the error page, since a download has no page to show them on.
func (v *Viewer) export(w http.ResponseWriter, r *http.Request, outcomes []string, name string,
	write func(context.Context, activity.Filter, io.Writer) error) {
	req, err := v.read(r.Context(), r.URL.Query(), outcomes, false)
	if err != nil {
		v.unavailable(w, err)
		return
	}
	if len(req.problems) > 0 {
		v.renderError(w, http.StatusBadRequest, pagekit.ErrorPage{
			Title: "The export's filters cannot be read", Message: req.problems[0],
			Next: "Go back to the viewer, correct the filters and export again.",
		})
		return
	}
	v.kit.SetHeaders(w.Header(), pagekit.Options{})
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	if err := write(r.Context(), req.parsed.Filter, w); err != nil {
		// The status has gone with the first rows: the download ends short
		// and the log says why.
		v.log.Warn("export stopped", zap.String("export", name), zap.Error(err))
	}
}

func (v *Viewer) unavailable(w http.ResponseWriter, err error) {
	ref := pagekit.NewReference()
	v.log.Error("viewer query failed", zap.String("reference", ref), zap.Error(err))
	v.renderError(w, http.StatusServiceUnavailable, pagekit.ErrorPage{
		Title:     "The events cannot be read just now",
		Message:   "erpgate could not read its database for this page.",
		Next:      "Try again in a moment; if it keeps happening, the operator's logs have the details under the reference below.",
		Reference: ref,
	})
}

func (v *Viewer) renderError(w http.ResponseWriter, status int, p pagekit.ErrorPage) {
	if err := v.kit.RenderError(w, status, p); err != nil {
		v.log.Warn("render viewer error page", zap.Error(err))
	}
}

func rangeText(from, to time.Time) string {
	return from.Format("2 Jan 2006 15:04") + " to " + to.Format("2 Jan 2006 15:04") + " UTC"
}

// plural is one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
