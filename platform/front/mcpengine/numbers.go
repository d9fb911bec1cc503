package mcpengine

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// plainNumbers rewrites each number of a write's arguments written with
// an exponent (0.1e7, 1E3) as the same value in plain decimals (1000000,
// 1000), exactly: the approval page shows the values the tool gets, and a
// person reads "0.1e7" as 0.1. Numbers without an exponent are left as
// written (their digits are what the person approves), and so are
// arguments with no such number. The digest, the preview and the write
// all see the rewritten arguments, so the same call always maps to the
// same approval.
func plainNumbers(args json.RawMessage) (json.RawMessage, error) {
	if !bytes.ContainsAny(args, "eE") {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	doc, changed := plainValue(doc)
	if !changed {
		return args, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

func plainValue(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		changed := false
		for k, e := range x {
			if p, ok := plainValue(e); ok {
				x[k], changed = p, true
			}
		}
		return x, changed
	case []any:
		changed := false
		for i, e := range x {
			if p, ok := plainValue(e); ok {
				x[i], changed = p, true
			}
		}
		return x, changed
	case json.Number:
		if p, ok := plainNumber(string(x)); ok {
			return json.Number(p), true
		}
	}
	return v, false
}

// plainNumber is a JSON number literal with an exponent in plain
// decimals, with as many decimal places as its value needs (1.50e1 is
// 15.0, 1.5e-3 is 0.0015); false for one without an exponent.
func plainNumber(s string) (string, bool) {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return "", false
	}
	exp, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return "", false
	}
	places := 0
	if dot := strings.IndexByte(s[:i], '.'); dot >= 0 {
		places = i - dot - 1
	}
	places = max(places-exp, 0)
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "", false
	}
	return r.FloatString(places), true
}
