package config

import "strings"

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
