package config

import (
	"fmt"
	"strconv"
	"strings"
)

// value is one setting's raw input before validation.
type value struct {
	// text is the trimmed scalar text; unused by list settings.
	text string
	// items are the trimmed, non-empty entries of a list setting.
	items []string
	// from names where the value came from, to prefix problems: the
	// environment variable, or the YAML key with file and line.
	from string
}

// splitList splits a comma-separated list, trimming entries and dropping
// empty ones.
func splitList(s string) []string {
	var items []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// isEmpty reports whether v carries nothing; empty values count as unset.
func (v value) isEmpty(list bool) bool {
	if list {
		return len(v.items) == 0
	}
	return v.text == ""
}

// mayHoldCredential reports whether a setting's text may carry a
// credential: user info (@), a query (?), a fragment (#) or key=value
// words (=). Whatever the setting, such text is not repeated in a problem,
// since problems reach the start-up log. A number, a duration, a host
// name or a plain URL holds none of these and may be quoted.
func mayHoldCredential(s string) bool {
	return strings.ContainsAny(s, "@?#=")
}

// withhold is problem, one of v's, without any of v's text that may hold
// a credential: the value, or a list's entry, quoted or not, is replaced
// by words saying it is not repeated (a list's entry by its place in the
// list). It is the one rule for every setting, so no setting's apply can
// quote such text into the log.
func (v value) withhold(problem string) string {
	replace := func(text, with string) {
		if text == "" || !mayHoldCredential(text) {
			return
		}
		problem = strings.ReplaceAll(problem, strconv.Quote(text), with)
		problem = strings.ReplaceAll(problem, text, with)
	}
	replace(v.text, "a value not repeated here since it may hold a credential")
	for i, item := range v.items {
		replace(item, fmt.Sprintf("entry %d, not repeated here since it may hold a credential,", i+1))
	}
	return problem
}
