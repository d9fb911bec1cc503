package acumaticatest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// handleEntityRoot is GET /entity: the build version and the endpoints.
func (s *Simulator) handleEntityRoot(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeMethodNotAllowed(w, r.Method)
		return
	}
	var b strings.Builder
	o := newJSONObject(&b)
	v := newJSONObject(o.key("version"))
	v.str("acumaticaBuildVersion", BuildVersion)
	v.str("databaseVersion", BuildVersion)
	v.close()
	b2 := o.key("endpoints")
	b2.WriteByte('[')
	for i, ver := range []string{Version24, Version25} {
		if i > 0 {
			b2.WriteByte(',')
		}
		e := newJSONObject(b2)
		e.str("name", EndpointName)
		e.str("version", ver)
		e.str("href", pathPrefix(r)+"/entity/"+EndpointName+"/"+ver+"/")
		e.close()
	}
	b2.WriteByte(']')
	o.close()
	writeJSON(w, http.StatusOK, b.String())
}

// BuildVersion is the Acumatica build the simulator reports (2025 R2).
const BuildVersion = "25.200.0248"

// handleContract serves /entity/{endpoint}/{version}/{rest…}.
func (s *Simulator) handleContract(w http.ResponseWriter, r *http.Request, endpoint, version string, rest []string) {
	ep := endpoints()[version]
	if !strings.EqualFold(endpoint, EndpointName) || ep == nil {
		writeNotFound(w, r)
		return
	}
	p := s.authenticate(w, r, false)
	if p == nil {
		return
	}
	if len(rest) == 0 || rest[0] == "" {
		writeNotFound(w, r)
		return
	}
	if strings.EqualFold(rest[0], "swagger.json") && len(rest) == 1 {
		s.serveSwagger(w, r, ep)
		return
	}
	es := ep.entity(rest[0])
	if es == nil {
		writeNotFound(w, r)
		return
	}
	if !s.canReadScreen(p.user, es.Screen) {
		writeForbidden(w, es.Screen)
		return
	}
	if r.Method == http.MethodGet && len(rest) == 4 && strings.EqualFold(rest[2], "status") {
		s.pollLongOperation(w, r, p, rest[3])
		return
	}
	if s.formBusy(p.session, es.Screen) {
		writeLongOperationRunning(w)
		return
	}
	if form := s.opts.SetupNotEntered; form != "" {
		// The graph reads its setup when the form opens, after the
		// access check.
		writeJSON(w, http.StatusInternalServerError, exceptionError(
			"The required configuration data is not entered on the "+form+" form.", "PX.Data.PXSetupNotEnteredException",
			"   at PX.Data.PXSetupSelect`1.get_Current()"))
		return
	}
	viewOnly := !s.canWriteScreen(p.user, es.Screen)
	if viewOnly && r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPut {
		// A role with View Only rights on the form reads it but may not
		// save: the same 403 as for a form the role lacks. A PUT is
		// answered in putEntity.
		writeForbidden(w, es.Screen)
		return
	}
	base := pathPrefix(r) + "/entity/" + EndpointName + "/" + version
	rn := &renderer{ep: ep, base: base}
	switch r.Method {
	case http.MethodGet:
		switch {
		case len(rest) == 1:
			s.getList(w, r, rn, es)
		case len(rest) == 2 && rest[1] == "$adHocSchema":
			s.adHocSchema(w, rn, es)
		default:
			s.getOne(w, r, rn, es, rest[1:])
		}
	case http.MethodPut:
		if len(rest) != 1 {
			writeNotFound(w, r)
			return
		}
		s.putEntity(w, r, rn, es, false, viewOnly)
	case http.MethodPatch:
		if version == Version24 {
			writeMethodNotAllowed(w, r.Method)
			return
		}
		if len(rest) != 1 {
			writeNotFound(w, r)
			return
		}
		s.putEntity(w, r, rn, es, true, false)
	case http.MethodDelete:
		if len(rest) < 2 {
			writeMethodNotAllowed(w, r.Method)
			return
		}
		s.deleteEntity(w, r, es, rest[1:])
	case http.MethodPost:
		if len(rest) != 2 {
			writeJSON(w, http.StatusNotAcceptable, httpError("The requested resource does not support this operation."))
			return
		}
		s.invokeAction(w, r, p, rn, es, rest[1])
	default:
		writeMethodNotAllowed(w, r.Method)
	}
}

// queryOptions are the parsed $select/$expand of a request.
type queryOptions struct {
	expand, sel pathSet
}

// parseQuery validates $select (an unknown field is a 500
// KeyNotFoundException, as on the real server) and parses $expand
// (unknown names are ignored).
func parseQuery(w http.ResponseWriter, r *http.Request, ep *endpointSchema, es *entitySchema) (queryOptions, bool) {
	q := r.URL.Query()
	opts := queryOptions{expand: parsePaths(q.Get("$expand")), sel: parsePaths(q.Get("$select"))}
	if !validSelect(ep, es, opts.sel) {
		writeJSON(w, http.StatusInternalServerError, exceptionError("The given key was not present in the dictionary.",
			"System.Collections.Generic.KeyNotFoundException", stackTraceSelect))
		return opts, false
	}
	return opts, true
}

func validSelect(ep *endpointSchema, es *entitySchema, sel pathSet) bool {
	for name, sub := range sel {
		f := es.field(name)
		if f == nil {
			return false
		}
		if len(sub) > 0 {
			if f.Kind == kindScalar {
				return false
			}
			if !validSelect(ep, ep.schema(f.Ref), sub) {
				return false
			}
		}
	}
	return true
}

// isInquiry reports whether a top-level entity is an inquiry form: keyless,
// and named *Inquiry or CompaniesStructure. Acumatica computes its rows
// from the parameters a PUT sends (with $expand=Results); it has no list.
func isInquiry(es *entitySchema) bool {
	return len(es.Keys) == 0 && (strings.HasSuffix(es.Name, "Inquiry") || es.Name == "CompaniesStructure")
}

// writeCannotOptimize is the real answer to a GET list of an inquiry
// entity (api-facts.md §3.2): a 500 CannotOptimizeException naming the
// inquiry's parameters, whose values a BQL delegate of the form's filter
// needs. The names are the entity's scalar fields, as in the recorded
// body for InventorySummaryInquiry.
func writeCannotOptimize(w http.ResponseWriter, es *entitySchema) {
	var b strings.Builder
	b.WriteString("Optimization cannot be performed.The following fields cause the error:\r\n")
	for _, name := range es.Order {
		if es.Fields[name].Kind == kindScalar {
			b.WriteString(name + ": View Filter has BQL delegate\r\n")
		}
	}
	writeJSON(w, http.StatusInternalServerError, exceptionError(b.String(),
		"PX.Api.ContractBased.OptimizedExport.CannotOptimizeException", stackTraceCannotOptimize))
}

func (s *Simulator) getList(w http.ResponseWriter, r *http.Request, rn *renderer, es *entitySchema) {
	if isInquiry(es) {
		writeCannotOptimize(w, es)
		return
	}
	q := r.URL.Query()
	opts, ok := parseQuery(w, r, rn.ep, es)
	if !ok {
		return
	}
	top, skip := -1, 0
	if v := q.Get("$top"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, httpError("The request is invalid."))
			return
		}
		top = n
	}
	if v := q.Get("$skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, httpError("The request is invalid."))
			return
		}
		skip = n
	}
	var pred func(any) bool
	if f := q.Get("$filter"); strings.TrimSpace(f) != "" {
		var err error
		pred, err = compileFilter(f, odataV3, &contractScope{ep: rn.ep, es: es})
		if err != nil {
			writeFilterError500(w, err)
			return
		}
	}
	rows := s.data.Records(es.Name)
	showArchived := showsArchived(r)
	var b strings.Builder
	b.WriteByte('[')
	n := 0
	for _, row := range rows {
		if pred != nil && !pred(row) || !showArchived && s.archived(row) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if top >= 0 && n >= top {
			break
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		rn.top(&b, row, n, opts.expand, opts.sel)
	}
	b.WriteByte(']')
	writeJSON(w, http.StatusOK, b.String())
}

// writeFilterError500 reports a $filter the OData v3 parser rejected.
func writeFilterError500(w http.ResponseWriter, err error) {
	writeJSON(w, http.StatusInternalServerError, exceptionError(err.Error(), "Microsoft.Data.OData.ODataException", stackTraceFilter))
}

// splitKeys turns the path segments after the entity into key values;
// "|" may separate keys instead of "/".
func splitKeys(segs []string) []string {
	var out []string
	for _, s := range segs {
		out = append(out, strings.Split(s, "|")...)
	}
	return out
}

// findRecord resolves a by-key or by-id path.
func (s *Simulator) findRecord(es *entitySchema, segs []string) *Record {
	keys := splitKeys(segs)
	if len(keys) == 1 && reGUID.MatchString(keys[0]) && len(keys[0]) == 36 {
		if rec := s.data.ByID(es.Name, keys[0]); rec != nil {
			return rec
		}
	}
	if len(keys) != len(es.Keys) {
		return nil
	}
	return s.data.Find(es.Name, keys...)
}

func (s *Simulator) getOne(w http.ResponseWriter, r *http.Request, rn *renderer, es *entitySchema, segs []string) {
	opts, ok := parseQuery(w, r, rn.ep, es)
	if !ok {
		return
	}
	rec := s.findRecord(es, segs)
	if rec == nil || !showsArchived(r) && s.archived(rec) {
		writeNoEntity(w)
		return
	}
	var b strings.Builder
	rn.top(&b, rec, 1, opts.expand, opts.sel)
	writeJSON(w, http.StatusOK, b.String())
}

// archived reports whether Options.ArchivedBefore archives rec.
func (s *Simulator) archived(rec *Record) bool {
	if s.opts.ArchivedBefore.IsZero() {
		return false
	}
	d := rec.Time("Date")
	return !d.IsZero() && d.Before(s.opts.ArchivedBefore)
}

// showsArchived reports whether a request asks for archived records too
// (PX-ApiArchive: SHOW).
func showsArchived(r *http.Request) bool {
	return strings.EqualFold(strings.TrimSpace(r.Header.Get("PX-ApiArchive")), "SHOW")
}

// adHocSchema returns an empty template of the entity.
func (s *Simulator) adHocSchema(w http.ResponseWriter, rn *renderer, es *entitySchema) {
	var b strings.Builder
	o := newJSONObject(&b)
	o.str("id", "00000000-0000-0000-0000-000000000000")
	o.raw("rowNumber", "1")
	o.raw("note", "null")
	for _, name := range es.Order {
		if f := es.Fields[name]; f.Kind == kindScalar {
			o.raw(name, "{}")
		}
	}
	o.raw("custom", "{}")
	o.close()
	writeJSON(w, http.StatusOK, b.String())
}

// swaggerServerPlaceholder stands for servers[0].url in the cached
// documents; it is replaced with this instance's URL per request.
const swaggerServerPlaceholder = "https://acumaticatest.invalid/server-url"

// swaggerDocs caches the rendered OpenAPI document of each version.
var swaggerDocs sync.Map

// serveSwagger serves the endpoint's OpenAPI document with servers[0].url
// pointing at this instance.
func (s *Simulator) serveSwagger(w http.ResponseWriter, r *http.Request, ep *endpointSchema) {
	v, ok := swaggerDocs.Load(ep.Version)
	if !ok {
		doc := make(map[string]any, len(ep.swagger))
		for k, v := range ep.swagger {
			doc[k] = v
		}
		doc["servers"] = []any{map[string]any{"url": swaggerServerPlaceholder}}
		out, err := json.Marshal(doc)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, exceptionError(err.Error(), "System.Exception", ""))
			return
		}
		v, _ = swaggerDocs.LoadOrStore(ep.Version, string(out))
	}
	server := baseURL(r) + "/entity/" + EndpointName + "/" + ep.Version
	writeJSON(w, http.StatusOK, strings.Replace(v.(string), swaggerServerPlaceholder, server, 1))
}
