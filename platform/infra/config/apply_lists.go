package config

import (
	"errors"
	"fmt"
	"unicode"
)

// fieldPatterns accepts redaction field-name patterns, matched by word
// parts in any case style (platform/infra/redact), so they must be
// printable.
func fieldPatterns(field func(*Config) *[]string) func(*Config, value) error {
	return func(c *Config, v value) error {
		var problems []error
		patterns := make([]string, 0, len(v.items))
		for _, item := range v.items {
			if !isPrintable(item) {
				problems = append(problems, fmt.Errorf("pattern %q contains control characters", item))
				continue
			}
			patterns = append(patterns, item)
		}
		*field(c) = patterns
		return errors.Join(problems...)
	}
}

func isPrintable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
