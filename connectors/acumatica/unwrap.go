package acumatica

// Acumatica's contract-based API wraps every field: {"CustomerName":
// {"value":"Acme"}}, and an empty field is {}. A model reads the plain
// form far better (MCP4Acumatica found the same), so every record is
// unwrapped before it leaves the connector. Numbers stay json.Number, so a
// decimal keeps exactly the digits Acumatica sent ("30.0000").

// systemKeys are the members Acumatica adds to every record that carry no
// business data for a model: the position in the response and the links
// for file uploads.
var systemKeys = map[string]bool{"rowNumber": true, "_links": true}

// unwrapRecord returns rec with every field wrapper replaced by its value
// ({} by null), linked entities and detail lines unwrapped recursively,
// custom fields flattened to their values, and rowNumber and _links
// dropped. rec is not modified.
func unwrapRecord(rec map[string]any) map[string]any {
	out := make(map[string]any, len(rec))
	for k, v := range rec {
		if systemKeys[k] {
			continue
		}
		switch k {
		case "custom":
			if c := unwrapCustom(v); c != nil {
				out[k] = c
			}
			continue
		case "files", "error", "id":
			out[k] = v
			continue
		}
		out[k] = unwrapValue(v)
	}
	return out
}

// unwrapValue unwraps one member of a record.
func unwrapValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		if val, ok := wrapperValue(t); ok {
			return val
		}
		return unwrapRecord(t)
	case []any:
		lines := make([]any, len(t))
		for i, line := range t {
			if m, ok := line.(map[string]any); ok {
				lines[i] = unwrapRecord(m)
			} else {
				lines[i] = line
			}
		}
		return lines
	}
	return v
}

// wrapperValue reports whether m is a field wrapper — {} or {"value": x},
// optionally with "error" (a validation message) — and returns its value.
// A linked entity always has an id, so it is never mistaken for one.
func wrapperValue(m map[string]any) (any, bool) {
	if len(m) == 0 {
		return nil, true
	}
	if _, hasID := m["id"]; hasID {
		return nil, false
	}
	val, hasValue := m["value"]
	for k := range m {
		if k != "value" && k != "error" {
			return nil, false
		}
	}
	if !hasValue {
		// {"error": "..."} alone: keep it visible.
		return m, true
	}
	if e, ok := m["error"].(string); ok && e != "" {
		return map[string]any{"value": val, "error": e}, true
	}
	return val, true
}

// unwrapCustom flattens custom fields, {"Document":{"AttributeCOLOR":
// {"type":"CustomStringField","value":"Red"}}} → {"Document":
// {"AttributeCOLOR":"Red"}}, and returns nil when there are none.
func unwrapCustom(v any) any {
	views, ok := v.(map[string]any)
	if !ok || len(views) == 0 {
		return nil
	}
	out := map[string]any{}
	for view, fields := range views {
		fm, ok := fields.(map[string]any)
		if !ok {
			out[view] = fields
			continue
		}
		flat := map[string]any{}
		for name, f := range fm {
			if w, ok := f.(map[string]any); ok {
				flat[name] = w["value"]
			} else {
				flat[name] = f
			}
		}
		out[view] = flat
	}
	return out
}
