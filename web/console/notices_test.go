package console

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// A notice after an action comes from known words and a well-formed slug
// or a known setting, never from the link's text: a link cannot make the
// console tell the operator something of an attacker's choosing.
func TestNoticesCannotBeWrittenByALink(t *testing.T) {
	for q, want := range map[string]string{
		"done=disabled&site=acme":                 "Site acme is now disabled.",
		"done=deleted&site=acme":                  "Site acme is deleted, with its connections, tokens and grants.",
		"done=Call+0800+123+456&site=acme":        "",
		"done=disabled&site=Call+support+at+evil": "",
		"done=disabled":                           "",
	} {
		v, _ := url.ParseQuery(q)
		if got := siteDone(v); got != want {
			t.Errorf("siteDone(%s) = %q, want %q", q, got, want)
		}
	}
	for q, want := range map[string]string{
		"done=changed&setting=max_records":                                 "Max records per query is changed; every replica applies it within a second.",
		"done=reset&setting=read_only":                                     "Read-only is back to its default.",
		"done=changed&setting=Your+token+expired,+sign+in+at+evil.example": "",
		"done=pwned&setting=max_records":                                   "",
	} {
		v, _ := url.ParseQuery(q)
		if got := settingDone(v); got != want {
			t.Errorf("settingDone(%s) = %q, want %q", q, got, want)
		}
	}
}

// FuzzNotices: whatever a link's query says, a notice is built from
// known words, a well-formed slug and a known setting's label only.
func FuzzNotices(f *testing.F) {
	for _, q := range []string{"done=disabled&site=acme", "done=deleted&site=acme", "done=own-callback&site=acme",
		"done=Call+0800+123+456&site=acme", "done=changed&setting=max_records", "done=reset&setting=read_only", "done=pwned&setting=max_records"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		if got := siteDone(q); got != "" {
			slug := q.Get("site")
			if sites.ValidateSlug(slug) != nil || !strings.HasPrefix(got, "Site "+slug+" ") {
				t.Fatalf("siteDone(%q) = %q", raw, got)
			}
			if !slices.Contains([]string{"disabled", "enabled", "deleted", "own-callback"}, q.Get("done")) {
				t.Fatalf("siteDone(%q) = %q for an unknown action", raw, got)
			}
		}
		if got := settingDone(q); got != "" {
			d, ok := livesettings.Lookup(q.Get("setting"))
			if !ok || !strings.HasPrefix(got, d.Label+" is ") {
				t.Fatalf("settingDone(%q) = %q", raw, got)
			}
		}
	})
}
