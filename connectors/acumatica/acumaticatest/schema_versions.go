package acumaticatest

import (
	"sort"
	"strings"
)

// Default/25.200.001 is derived from the 24.200.001 document with the
// differences Acumatica's "Comparison of System Endpoints" lists for that
// step (both are Contract Version 4, and the top-level entity list is
// identical):
//   - new sub-entities BillRetainageDocument (Bill.RetainageDocuments) and
//     CompanyTree (Employee.CompanyTreeInfo);
//   - structured address parts on the address entities;
//   - new fields CreditCardTransactionDetail.CommerceTranNbr, Email.Type,
//     TimeEntry.TimeZone (and the replacements named by the removals);
//   - removed fields Event.EndDate/EndTime, TimeEntry.Time,
//     ReminderDetail.RemindAtDate/RemindAtTime,
//     BusinessAccountMainContact.LanguageOrLocale,
//     TaxCodeSetting.UseDefault, TaxSettingDetail.UseDefault;
//   - PATCH on every entity, and `_workflowActions` on the Entity schema.
//
// The field lists of the two new sub-entities are not public; the ones
// used here are plausible stand-ins.
func deriveSwagger25(doc map[string]any) {
	doc["info"] = map[string]any{"title": "Default/" + Version25, "version": "4"}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)

	addressParts := []string{"BuildingName", "BuildingNumber", "Department", "DistrictName", "Floor",
		"PostBox", "Room", "StreetName", "SubDepartment", "TownLocationName", "UnitNumber"}
	for _, s := range []string{"Address", "ProjectAddress", "SalesInvoiceAddress", "SrvOrdAddress", "SubcontractVendorAddressInfo"} {
		for _, f := range addressParts {
			setProp(schemas, s, f, wrapperRef(tString))
		}
	}
	setProp(schemas, "CreditCardTransactionDetail", "CommerceTranNbr", wrapperRef(tString))
	setProp(schemas, "Email", "Type", wrapperRef(tString))
	setProp(schemas, "TimeEntry", "TimeZone", wrapperRef(tString))
	setProp(schemas, "Event", "EndDateTime", wrapperRef(tDateTime))
	setProp(schemas, "ReminderDetail", "RemindAtDateTime", wrapperRef(tDateTime))
	setProp(schemas, "BusinessAccount", "LocaleName", wrapperRef(tString))

	for _, rm := range [][2]string{{"Event", "EndDate"}, {"Event", "EndTime"}, {"TimeEntry", "Time"},
		{"ReminderDetail", "RemindAtDate"}, {"ReminderDetail", "RemindAtTime"},
		{"BusinessAccountMainContact", "LanguageOrLocale"}, {"TaxCodeSetting", "UseDefault"},
		{"TaxSettingDetail", "UseDefault"}} {
		deleteProp(schemas, rm[0], rm[1])
	}

	schemas["BillRetainageDocument"] = entitySchemaJSON(map[string]string{
		"Type": tString, "ReferenceNbr": tString, "Date": tDateTime, "PostPeriod": tString,
		"Status": tString, "RetainageAmount": tDecimal, "Balance": tDecimal, "Description": tString})
	schemas["CompanyTree"] = entitySchemaJSON(map[string]string{
		"WorkgroupID": tString, "Description": tString, "ParentWorkgroupID": tString})
	setProp(schemas, "Bill", "RetainageDocuments", map[string]any{"type": "array",
		"items": map[string]any{"$ref": "#/components/schemas/BillRetainageDocument"}})
	setProp(schemas, "Employee", "CompanyTreeInfo", map[string]any{"$ref": "#/components/schemas/CompanyTree"})

	if ent, ok := schemas["Entity"].(map[string]any); ok {
		if props, ok := ent["properties"].(map[string]any); ok {
			props["_workflowActions"] = map[string]any{"type": "object",
				"additionalProperties": map[string]any{"type": "object"}}
		}
	}
	addPatchOperations(doc)
}

func wrapperRef(t string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + t}
}

func entitySchemaJSON(fields map[string]string) map[string]any {
	props := map[string]any{}
	for n, t := range fields {
		props[n] = wrapperRef(t)
	}
	return map[string]any{"allOf": []any{
		map[string]any{"$ref": "#/components/schemas/Entity"},
		map[string]any{"type": "object", "properties": props},
	}}
}

// schemaProps returns the properties map of an allOf entity schema.
func schemaProps(schemas map[string]any, name string) map[string]any {
	sch, _ := schemas[name].(map[string]any)
	parts, _ := sch["allOf"].([]any)
	for _, p := range parts {
		if pm, ok := p.(map[string]any); ok {
			if props, ok := pm["properties"].(map[string]any); ok {
				return props
			}
		}
	}
	return nil
}

func setProp(schemas map[string]any, schema, field string, v map[string]any) {
	if props := schemaProps(schemas, schema); props != nil {
		props[field] = v
	}
}

func deleteProp(schemas map[string]any, schema, field string) {
	if props := schemaProps(schemas, schema); props != nil {
		delete(props, field)
	}
}

// addPatchOperations gives every "/{Entity}" path a PATCH operation
// modelled on its PUT, with the 404/412 responses 25.200.001 declares.
func addPatchOperations(doc map[string]any) {
	paths, _ := doc["paths"].(map[string]any)
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, p := range keys {
		item, _ := paths[p].(map[string]any)
		put, ok := item["put"].(map[string]any)
		if !ok || strings.Count(p, "/") != 1 {
			continue
		}
		patch := map[string]any{}
		for k, v := range put {
			patch[k] = v
		}
		if id, ok := put["operationId"].(string); ok {
			patch["operationId"] = strings.TrimSuffix(id, "_PutEntity") + "_PatchEntity"
		}
		patch["summary"] = "Updates an existing record."
		resp := map[string]any{}
		if r, ok := put["responses"].(map[string]any); ok {
			for k, v := range r {
				resp[k] = v
			}
		}
		resp["404"] = map[string]any{"$ref": "#/components/responses/PatchEntity_404"}
		resp["412"] = map[string]any{"$ref": "#/components/responses/PatchEntity_412"}
		patch["responses"] = resp
		item["patch"] = patch
	}
	comps := doc["components"].(map[string]any)
	responses, _ := comps["responses"].(map[string]any)
	if responses == nil {
		return
	}
	httpErr := map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/HttpError"}}}
	responses["PatchEntity_404"] = map[string]any{"description": "The specified record cannot be found in the system.", "content": httpErr}
	responses["PatchEntity_412"] = map[string]any{"description": "The PATCH method cannot be used for insertion of a record, but a header of the request specifies that the record has to be inserted.", "content": httpErr}
}
