package config

import (
	"fmt"
	"strings"
	"testing"
)

// The markers stand for a credential written into a setting's value.
const (
	userInfoMarker = "pw-Us3rinfoMarker"
	queryMarker    = "tok-Qu3ryMarker"
	fragMarker     = "frag-Fr4gMarker"
	kvMarker       = "kv-K3yValueMarker"
)

// credentialBearingValues are refused by every setting that is not a
// secret (and by the secret ones too, but for the admin token, which
// takes any long text): a URL with user info, a query or a fragment, one
// that does not parse, a scheme-less user:password@host, a list whose
// second entry carries one, and key=value words.
var credentialBearingValues = []string{
	"http://admin:" + userInfoMarker + "@erpgate.example.com/?access_token=" + queryMarker,
	"ftp://admin:" + userInfoMarker + "@erpgate.example.com/",
	"https://erpgate.example.com:99999/x?api_key=" + queryMarker,
	"https://erpgate.example.com/#" + fragMarker,
	"https://admin:" + userInfoMarker + "%zz@erpgate.example.com",
	"admin:" + userInfoMarker + "@erpgate.example.com:8080",
	"erp.example.com, https://admin:" + userInfoMarker + "@erp.example.com/?token=" + queryMarker,
	"host=db user=erpgate password=" + kvMarker,
}

// refusedSecretMarkers lists the markers a problem text contains.
func refusedSecretMarkers(text string) []string {
	var found []string
	for _, m := range []string{userInfoMarker, queryMarker, fragMarker, kvMarker} {
		if strings.Contains(strings.ToLower(text), strings.ToLower(m)) {
			found = append(found, m)
		}
	}
	return found
}

// TestRefusedValueCredentialIsNotRepeated: a refused value that may hold a
// credential (user info, a query, a fragment, key=value words) is named by
// its setting and said what is wrong with, but never repeated, for every
// setting, from the environment and from the YAML file alike. Values that
// hold none (a number, a duration) are still quoted.
func TestRefusedValueCredentialIsNotRepeated(t *testing.T) {
	for _, s := range settings {
		for i, v := range credentialBearingValues {
			t.Run(fmt.Sprintf("%s/env/%d", s.env, i), func(t *testing.T) {
				cfg, err := Load(validEnv().with(s.env, v).lookup, "")
				if err == nil {
					if cfg == nil {
						t.Fatal("no error and no configuration")
					}
					return // accepted (an admin token may be any long text)
				}
				if m := refusedSecretMarkers(err.Error()); len(m) > 0 {
					t.Errorf("%s=%q: the problems repeat %q:\n%s", s.env, v, m, err)
				}
				if !strings.Contains(err.Error(), s.env+": ") {
					t.Errorf("%s=%q: no problem names the variable:\n%s", s.env, v, err)
				}
			})
			t.Run(fmt.Sprintf("%s/file/%d", s.key, i), func(t *testing.T) {
				path := writeYAML(t, yamlSetting(s.key, v))
				_, err := Load(validEnvWithout(s.env).lookup, path)
				if err == nil {
					return
				}
				if m := refusedSecretMarkers(err.Error()); len(m) > 0 {
					t.Errorf("%s: %q: the problems repeat %q:\n%s", s.key, v, m, err)
				}
			})
		}
	}

	// Harmless refused values are still quoted, to help.
	problems := loadProblems(t, validEnv().with("ERPGATE_MAX_RECORDS", "lots", "ERPGATE_DEV_HOSTS", "erp.test, http://erp.test"), "")
	assertProblem(t, problems, "ERPGATE_MAX_RECORDS: ", `got "lots"`)
	assertProblem(t, problems, "ERPGATE_DEV_HOSTS: ", `"http://erp.test" is not a host name`)
	// A list's refused entry that may hold a credential is named by its
	// place in the list.
	problems = loadProblems(t, validEnv().with("ERPGATE_ALLOWED_ORIGINS", "https://a.example, https://u:"+userInfoMarker+"@b.example"), "")
	assertProblem(t, problems, "ERPGATE_ALLOWED_ORIGINS: ", "entry 2", "is not an origin")
}

// TestYAMLSyntaxProblemDoesNotRepeatAValue: an unquoted value that starts
// with * is read by YAML as an alias, and the parser's problem names it; an
// unknown key is named too. A token or password that starts with *, or a
// URL with a credential written where a key goes, must not reach the
// start-up error.
func TestYAMLSyntaxProblemDoesNotRepeatAValue(t *testing.T) {
	for _, content := range []string{
		"admin_token: *" + userInfoMarker + "0123456789abcdefghij\n",
		"\"https://admin:" + userInfoMarker + "@erp.example/?t=" + queryMarker + "\": 1\n",
		// A token pasted where a key goes, with none of @ ? # =.
		userInfoMarker + "0f3a9c: 1\n",
	} {
		problems := loadProblems(t, validEnvWithout("ERPGATE_ADMIN_TOKEN"), writeYAML(t, content))
		if m := refusedSecretMarkers(strings.Join(problems, "\n")); len(m) > 0 {
			t.Errorf("%q: the problems repeat %q:\n%s", content, m, strings.Join(problems, "\n"))
		}
		if !strings.Contains(problems[0], "config file") {
			t.Errorf("%q: want a problem naming the file first, got %q", content, problems)
		}
	}
}

// yamlSetting writes one dotted key's value as a YAML document, the value
// quoted so that YAML reads it as the text given.
func yamlSetting(key, v string) string {
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, p := range parts[:len(parts)-1] {
		b.WriteString(strings.Repeat("  ", i) + p + ":\n")
	}
	fmt.Fprintf(&b, "%s%s: %q\n", strings.Repeat("  ", len(parts)-1), parts[len(parts)-1], v)
	return b.String()
}

// validEnvWithout is validEnv without one variable, so that the file's
// value is the one read.
func validEnvWithout(name string) env {
	e := validEnv()
	delete(e, name)
	return e
}
