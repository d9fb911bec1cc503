package adminapi

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/store/activity"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// defaultEventPage is the page size when the query gives none.
const defaultEventPage = 100

// usageEventView is one usage event.
type usageEventView struct {
	ID         int64     `json:"id"`
	OccurredAt time.Time `json:"occurred_at"`
	SiteID     *string   `json:"site_id"`
	SiteSlug   string    `json:"site_slug"`
	AuthType   string    `json:"auth_type"`
	ERPUser    string    `json:"erp_user"`
	ClientID   string    `json:"client_id"`
	RequestID  string    `json:"request_id"`
	Method     string    `json:"method"`
	Tool       string    `json:"tool"`
	Outcome    string    `json:"outcome"`
	ErrorCode  string    `json:"error_code"`
	DurationMS int64     `json:"duration_ms"`
	ERPMS      *int64    `json:"erp_ms"`
	// RedactedCount values were redacted from the result, in the fields
	// RedactedFields names.
	RedactedCount  int    `json:"redacted_count"`
	RedactedFields string `json:"redacted_fields"`
}

// auditEventView is one audit event.
type auditEventView struct {
	Source     string    `json:"source"`
	ID         int64     `json:"id"`
	OccurredAt time.Time `json:"occurred_at"`
	SiteID     *string   `json:"site_id"`
	SiteSlug   string    `json:"site_slug"`
	Event      string    `json:"event"`
	ERPUser    string    `json:"erp_user"`
	ClientID   string    `json:"client_id"`
	ActorKind  string    `json:"actor_kind"`
	Actor      string    `json:"actor"`
	Outcome    string    `json:"outcome"`
	Reason     string    `json:"reason"`
	// Repeats is how many events the row counts: more than 1 for a
	// minute's refusals of anonymous visitors.
	Repeats int `json:"repeats"`
}

type eventPage[T any] struct {
	Events []T `json:"events"`
	// Next is the cursor of the next page, NextURL the same query with it;
	// both null on the last page.
	Next    *string `json:"next"`
	NextURL *string `json:"next_url"`
}

// eventQuery reads the viewer's filters, the page size and the site (an id
// or a slug) from the request.
func (a *API) eventQuery(c echo.Context, outcomes []string) (activity.Parsed, int, error) {
	q := c.QueryParams()
	p, err := activity.ParseQuery(q, time.Now(), outcomes)
	if err != nil {
		return activity.Parsed{}, 0, invalidRequest("%s", err.Error())
	}
	limit := defaultEventPage
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > activity.MaxPage {
			return activity.Parsed{}, 0, invalidRequest("limit must be a whole number from 1 to %d", activity.MaxPage)
		}
		limit = n
	}
	if p.Site != "" {
		id, err := a.siteFilter(c, p.Site)
		if err != nil {
			return activity.Parsed{}, 0, err
		}
		p.Filter.SiteID = id
	}
	return p, limit, nil
}

// siteFilter resolves the site filter: an id is taken as it is (the events
// of a deleted site keep its id), a slug must name a site.
func (a *API) siteFilter(c echo.Context, ref string) (uuid.UUID, error) {
	if id, err := uuid.Parse(ref); err == nil {
		return id, nil
	}
	if sites.ValidateSlug(ref) != nil {
		return uuid.Nil, invalidRequest("site must be a site's id or slug")
	}
	site, err := a.deps.Store.GetSiteBySlug(c.Request().Context(), ref)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return uuid.Nil, notFound("site %s does not exist; give its id or slug (the events of a deleted site are found by its id)", toolerr.Quote(ref))
	case err != nil:
		return uuid.Nil, internal(err)
	}
	return site.ID, nil
}

// nextURL is the request's own URL with the cursor of the next page.
func (a *API) nextURL(c echo.Context, next *activity.Cursor) (*string, *string) {
	if next == nil {
		return nil, nil
	}
	cur := next.String()
	q := c.Request().URL.Query()
	q.Set(activity.ParamAfter, cur)
	u := a.deps.PublicURL(c.Request().URL.Path) + "?" + q.Encode()
	return &cur, &u
}

// wantsCSV reports whether the request asks for CSV (format=csv).
func wantsCSV(c echo.Context) bool { return c.QueryParam("format") == "csv" }

// listUsageEvents answers GET /usage-events.
func (a *API) listUsageEvents(c echo.Context) error {
	p, limit, err := a.eventQuery(c, activity.UsageOutcomes)
	if err != nil {
		return err
	}
	if wantsCSV(c) {
		return a.streamCSV(c, "usage-events.csv", func(w http.ResponseWriter) error {
			return a.deps.Activity.ExportUsage(c.Request().Context(), p.Filter, w)
		})
	}
	page, err := a.deps.Activity.Usage(c.Request().Context(), p.Filter, p.After, limit)
	if err != nil {
		return internal(err)
	}
	out := eventPage[usageEventView]{Events: make([]usageEventView, 0, len(page.Events))}
	for _, e := range page.Events {
		v := usageEventView{
			ID: e.ID, OccurredAt: e.OccurredAt, SiteID: siteIDView(e.SiteID), SiteSlug: e.SiteSlug, AuthType: e.AuthType,
			ERPUser: e.ERPUser, ClientID: e.ClientID, RequestID: e.RequestID, Method: e.Method, Tool: e.Tool,
			Outcome: e.Outcome, ErrorCode: e.ErrorCode, DurationMS: e.DurationMS,
			RedactedCount: e.RedactedCount, RedactedFields: e.RedactedFields,
		}
		if e.HasERPMS {
			v.ERPMS = &e.ERPMS
		}
		out.Events = append(out.Events, v)
	}
	out.Next, out.NextURL = a.nextURL(c, page.Next)
	return c.JSON(http.StatusOK, out)
}

// listAuditEvents answers GET /audit-events.
func (a *API) listAuditEvents(c echo.Context) error {
	p, limit, err := a.eventQuery(c, activity.AuditOutcomes)
	if err != nil {
		return err
	}
	if wantsCSV(c) {
		return a.streamCSV(c, "audit-events.csv", func(w http.ResponseWriter) error {
			return a.deps.Activity.ExportAudit(c.Request().Context(), p.Filter, w)
		})
	}
	page, err := a.deps.Activity.Audit(c.Request().Context(), p.Filter, p.After, limit)
	if err != nil {
		return internal(err)
	}
	out := eventPage[auditEventView]{Events: make([]auditEventView, 0, len(page.Events))}
	for _, e := range page.Events {
		out.Events = append(out.Events, auditEventView{
			Source: e.SourceName(), ID: e.ID, OccurredAt: e.OccurredAt, SiteID: siteIDView(e.SiteID), SiteSlug: e.SiteSlug,
			Event: e.Event, ERPUser: e.ERPUser, ClientID: e.ClientID, ActorKind: e.ActorKind, Actor: e.Actor,
			Outcome: e.Outcome, Reason: e.Reason, Repeats: e.Repeats,
		})
	}
	out.Next, out.NextURL = a.nextURL(c, page.Next)
	return c.JSON(http.StatusOK, out)
}

// streamCSV sends the export as it is read. A failure before the first
// row is an ordinary error answer; after it, the response is cut short
// (the status has gone) and the error is logged by the envelope.
func (a *API) streamCSV(c echo.Context, name string, write func(w http.ResponseWriter) error) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+url.PathEscape(name)+`"`)
	h.Set("Cache-Control", "no-store")
	if err := write(c.Response()); err != nil {
		if !c.Response().Committed {
			return internal(err)
		}
		return err
	}
	return nil
}

func siteIDView(id uuid.UUID) *string {
	if id == uuid.Nil {
		return nil
	}
	s := id.String()
	return &s
}
