package console

import (
	"net/url"
	"testing"
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
