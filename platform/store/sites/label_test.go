package sites

import (
	"regexp"
	"testing"
)

// The rules ldhLabel replaced: the sites_slug_check constraint's pattern
// (migration 00001) and a DNS label in lower case.
var (
	slugConstraint = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$`)
	hostLabel      = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)
)

// FuzzLDHLabel: ldhLabel agrees with the patterns it replaced, so a slug
// the gateway accepts is one Postgres accepts, and no other.
func FuzzLDHLabel(f *testing.F) {
	for _, s := range []string{"", "a", "-", "a-", "-a", "a-b", "acme-nz", "Acme", "ac_me", "acme\n", "ünï", "0",
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvw",
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ldhLabel(s, maxSlugLength), slugConstraint.MatchString(s); got != want {
			t.Errorf("ldhLabel(%q, %d) = %v, the slug constraint says %v", s, maxSlugLength, got, want)
		}
		if got, want := ldhLabel(s, maxHostLabelLength), hostLabel.MatchString(s); got != want {
			t.Errorf("ldhLabel(%q, %d) = %v, the host label pattern says %v", s, maxHostLabelLength, got, want)
		}
	})
}
