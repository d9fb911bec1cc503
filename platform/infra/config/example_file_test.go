package config

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// examplePath is configs/erpgate.example.yaml, relative to this package.
const examplePath = "../../../configs/erpgate.example.yaml"

// structKeys returns the dotted yaml-tag paths of every leaf field of t.
func structKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == t.PkgPath() {
			keys = append(keys, structKeys(f.Type, prefix+tag+".")...)
			continue
		}
		keys = append(keys, prefix+tag)
	}
	return keys
}

func tableKeys() []string {
	keys := make([]string, len(settings))
	for i, s := range settings {
		keys[i] = s.key
	}
	return keys
}

// exampleKeys returns each leaf key of the example file with the comment
// written above it.
func exampleKeys(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatalf("read example file: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("parse example file: %v", err)
	}
	keys := map[string]string{}
	var walk func(m *yaml.Node, prefix string)
	walk = func(m *yaml.Node, prefix string) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			if v.Kind == yaml.MappingNode {
				walk(v, prefix+k.Value+".")
				continue
			}
			keys[prefix+k.Value] = k.HeadComment
		}
	}
	walk(doc.Content[0], "")
	return keys
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestConfigStructMatchesSettingsTable(t *testing.T) {
	structs := sorted(structKeys(reflect.TypeFor[Config](), ""))
	table := sorted(tableKeys())
	if !slices.Equal(structs, table) {
		t.Errorf("Config yaml tags and the settings table differ:\n struct: %v\n  table: %v", structs, table)
	}
}

func TestSettingsTableIsConsistent(t *testing.T) {
	envs := map[string]bool{}
	for _, s := range settings {
		if envs[s.env] {
			t.Errorf("environment variable %s is used twice", s.env)
		}
		envs[s.env] = true
		if s.env != "DATABASE_URL" && !strings.HasPrefix(s.env, "ERPGATE_") {
			t.Errorf("%s: environment variable %s lacks the ERPGATE_ prefix", s.key, s.env)
		}
		if s.required != 0 && s.fallback != "" {
			t.Errorf("%s: a required setting cannot have a default", s.key)
		}
		if s.required != 0 && s.required&RequireAll != s.required {
			t.Errorf("%s: requirement bit is not part of RequireAll", s.key)
		}
	}
}

// TestExampleFileDocumentsEveryKey keeps configs/erpgate.example.yaml and
// the settings table in step: the same keys, each with a comment naming its
// environment variable and its default.
func TestExampleFileDocumentsEveryKey(t *testing.T) {
	example := exampleKeys(t)
	documented := make([]string, 0, len(example))
	for k := range example {
		documented = append(documented, k)
	}
	if got, want := sorted(documented), sorted(tableKeys()); !slices.Equal(got, want) {
		t.Errorf("example file keys and settings differ:\n example: %v\nsettings: %v", got, want)
	}
	for _, s := range settings {
		comment, ok := example[s.key]
		if !ok {
			continue
		}
		if !strings.Contains(comment, "Env: "+s.env+".") && !strings.Contains(comment, "Env: "+s.env+" (") {
			t.Errorf("%s: comment does not name its environment variable %s", s.key, s.env)
		}
		wantDefault := "Default: " + s.fallback
		switch {
		case s.required != 0:
			wantDefault = "Default: none (required)."
		case s.fallback == "":
			wantDefault = "Default: empty."
		}
		if !strings.Contains(comment, wantDefault) {
			t.Errorf("%s: comment does not say %q", s.key, wantDefault)
		}
	}
}

// TestExampleFileValuesAreTheDefaults loads the example file as is: it must
// be valid, strict decoding must accept it, and it must change nothing.
func TestExampleFileValuesAreTheDefaults(t *testing.T) {
	fromExample := mustLoad(t, validEnv(), examplePath)
	defaults := mustLoad(t, validEnv(), "")
	fromExample.Keyring, defaults.Keyring = nil, nil
	if !reflect.DeepEqual(normalizeEmpty(*fromExample), normalizeEmpty(*defaults)) {
		t.Errorf("example file values differ from the defaults:\nexample:  %+v\ndefaults: %+v", *fromExample, *defaults)
	}
}

// normalizeEmpty turns empty slices into nil so a YAML [] equals an unset
// list.
func normalizeEmpty(c Config) Config {
	for _, s := range []*[]string{&c.DevHosts, &c.ERPPrivateHosts, &c.Redaction.Patterns, &c.Redaction.Skip, &c.MCP.AllowedOrigins} {
		if len(*s) == 0 {
			*s = nil
		}
	}
	return c
}

func TestSettingsDescribesTheTable(t *testing.T) {
	got := Settings()
	if len(got) != len(settings) {
		t.Fatalf("Settings() has %d entries, the table %d", len(got), len(settings))
	}
	byEnv := map[string]Setting{}
	for _, s := range got {
		byEnv[s.Env] = s
	}
	if s := byEnv["DATABASE_URL"]; s.Key != "database_url" || !s.Secret || s.Default != "" {
		t.Errorf("DATABASE_URL: %+v", s)
	}
	if s := byEnv["ERPGATE_LISTEN_ADDR"]; s.Default != "127.0.0.1:8080" || s.Secret {
		t.Errorf("ERPGATE_LISTEN_ADDR: %+v", s)
	}
}
