package config

import "strings"

// Error reports every problem found while loading the configuration, so an
// operator fixes them all in one pass. Problems never contain
// secret values, nor any refused value that may hold a credential (with
// user info, a query, a fragment or key=value words): they name the
// setting and say what is wrong.
type Error struct {
	Problems []string
}

// Error lists the problems one per line:
//
//	invalid configuration:
//	  - ERPGATE_PUBLIC_BASE_URL is required (or public_base_url in the config file)
//	  - ERPGATE_LOG_LEVEL: must be one of debug, info, warn, error; got "verbose"
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("invalid configuration:")
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p)
	}
	return b.String()
}
