package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadEnv sets one setting's environment variable to any text over a
// valid environment: Load either accepts it or returns an *Error whose
// problems name the variable, and a secret setting's text (or any
// comma-separated part of it) never appears in them, nor any other
// setting's that may hold a credential.
func FuzzLoadEnv(f *testing.F) {
	for i, s := range settings {
		f.Add(uint8(i), s.fallback)
		f.Add(uint8(i), "not a value, "+testDBPassword)
	}
	f.Add(uint8(5), "postgres://u:"+testDBPassword+"@db/erpgate")
	f.Add(uint8(5), "http://u:"+testDBPassword+"@db/%zz")
	f.Add(uint8(7), "k1:"+testKeyMaterial+",k2:"+testKeyMaterial[:20])
	f.Add(uint8(4), "https://erpgate.example.com/base/")
	f.Add(uint8(4), "http://u:"+testDBPassword+"@erpgate.example.com/?t=x")
	f.Add(uint8(1), "erp.test, https://u:"+testDBPassword+"@erp.test")
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		s := settings[int(which)%len(settings)]
		e := validEnv().with(s.env, text)
		cfg, err := Load(e.lookup, "")
		if err == nil {
			if cfg == nil {
				t.Fatal("no error and no configuration")
			}
			return
		}
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) == 0 {
			t.Fatalf("%s=%q: %v, want an *Error with problems", s.env, text, err)
		}
		for _, p := range ce.Problems {
			if !strings.HasPrefix(p, s.env) {
				t.Fatalf("%s=%q: problem %q does not name the variable", s.env, text, p)
			}
		}
		msg := err.Error()
		if !s.secret {
			// A refused value (or list entry) that may hold a credential
			// is never repeated, whatever the setting.
			for _, part := range append(strings.Split(text, ","), text) {
				if part = strings.TrimSpace(part); len(part) >= 8 && mayHoldCredential(part) && strings.Contains(msg, part) {
					t.Fatalf("%s=%q: the problems repeat %q, which may hold a credential: %s", s.env, text, part, msg)
				}
			}
			return
		}
		for _, part := range append(strings.Split(text, ","), text) {
			if part = strings.TrimSpace(part); len(part) >= 8 && strings.Contains(msg, part) && !strings.Contains(strings.ToLower(s.env+" "+s.key+" "+describeWords), strings.ToLower(part)) {
				t.Fatalf("%s=%q: the problems show secret text %q: %s", s.env, text, part, msg)
			}
		}
	})
}

// describeWords are words the secret settings' problems use, which a
// fuzzed secret may happen to contain.
const describeWords = "must be a valid postgres:// URL must start with postgres:// or postgresql:// must be at least 32 characters; generate one with `openssl rand -base64 32` cannot be parsed as id:base64key pairs expected id:base64key key id must be 1 to 32 characters from A-Z a-z 0-9 _ . - key is not valid base64 key must be 32 bytes after base64 decoding, got duplicate key id no keys given; expected id:base64key[,id:base64key...]"

// FuzzLoadFile reads any YAML file: Load accepts it or lists its
// problems, and the file's secret values never appear in them.
func FuzzLoadFile(f *testing.F) {
	f.Add("listen_addr: 127.0.0.1:9090\nupstream:\n  budget: 30s\nadmin_token: " + testAdminToken + "\n")
	f.Add("database_url: [" + testDatabaseURL + "]\n")
	f.Add("admin_token: &a " + testAdminToken + "\nlog_level: *a\n")
	f.Add("upstream: 5\nlimits:\n  max_records: x\n  max_records: y\n")
	f.Add("- a\n- b\n")
	f.Add("\t: bad")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		path := filepath.Join(dir, "erpgate.yaml")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(env{}.lookup, path)
		if err == nil {
			return
		}
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) == 0 {
			t.Fatalf("%q: %v, want an *Error with problems", content, err)
		}
		// A secret setting's value (the text after its key on the line)
		// never appears; other text of the file may (an unknown key is
		// named, whatever it says).
		for _, line := range strings.Split(content, "\n") {
			key, value, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || (key != "admin_token" && key != "database_url" && key != "encryption_keys") {
				continue
			}
			value = strings.Trim(strings.TrimSpace(value), `"'`)
			if len(value) >= 8 && strings.Contains(err.Error(), value) {
				t.Fatalf("%q: the problems show the value of %s: %s", content, key, err)
			}
		}
	})
}
