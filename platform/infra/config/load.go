package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// FileEnv names the environment variable holding the YAML file path when no
// --config flag is given.
const FileEnv = "ERPGATE_CONFIG"

// Requirement is a set of settings a command cannot run without. Settings
// outside the set may be missing; when present they are still validated.
type Requirement uint

const (
	// RequireDatabaseURL requires database_url (DATABASE_URL).
	RequireDatabaseURL Requirement = 1 << iota
	// RequirePublicBaseURL requires public_base_url.
	RequirePublicBaseURL
	// RequireAdminToken requires admin_token.
	RequireAdminToken
	// RequireEncryptionKeys requires encryption_keys.
	RequireEncryptionKeys

	// RequireAll is what the server needs.
	RequireAll = RequireDatabaseURL | RequirePublicBaseURL | RequireAdminToken | RequireEncryptionKeys
)

// Load reads the configuration the server needs: every required setting must
// be present. See LoadRequiring.
func Load(lookupEnv func(string) (string, bool), yamlPath string) (*Config, error) {
	return LoadRequiring(lookupEnv, yamlPath, RequireAll)
}

// LoadDatabaseOnly reads the configuration for commands such as
// `erpgate migrate` that need only the database URL. See LoadRequiring.
func LoadDatabaseOnly(lookupEnv func(string) (string, bool), yamlPath string) (*Config, error) {
	return LoadRequiring(lookupEnv, yamlPath, RequireDatabaseURL)
}

// LoadRequiring reads the configuration from environment variables and an
// optional YAML file, applies defaults and validates every value.
//
// lookupEnv is usually os.LookupEnv (nil means os.LookupEnv). yamlPath is the
// --config flag value; when empty, ERPGATE_CONFIG names the file, and when
// both are empty no file is read. Environment variables override the file.
// Values are trimmed, and an empty value counts as unset.
//
// On any problem it returns a *Error listing every problem found, in
// settings order after any file problems, and a nil Config.
func LoadRequiring(lookupEnv func(string) (string, bool), yamlPath string, required Requirement) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if yamlPath == "" {
		yamlPath, _ = lookupEnv(FileEnv)
		yamlPath = strings.TrimSpace(yamlPath)
	}

	var problems []string
	fileVals, fileReadable := fileValues{}, true
	if yamlPath != "" {
		var fileProblems []string
		fileVals, fileProblems, fileReadable = readFile(yamlPath)
		problems = append(problems, fileProblems...)
	}

	cfg := &Config{}
	var secretValues []string
	for i := range settings {
		s := &settings[i]
		v, ok := resolve(s, lookupEnv, fileVals)
		if !ok {
			// A file that could not be read may hold the value, so
			// "required" would send the operator the wrong way.
			if s.required&required != 0 && fileReadable {
				problems = append(problems, fmt.Sprintf("%s is required (or %s in the config file)", s.env, s.key))
			}
			continue
		}
		if s.secret {
			secretValues = append(secretValues, v.text)
		}
		if err := s.apply(cfg, v); err != nil {
			for _, msg := range problemLines(err) {
				problems = append(problems, v.from+": "+v.withhold(msg))
			}
		}
	}

	if len(problems) > 0 {
		return nil, &Error{Problems: scrub(problems, secretValues)}
	}
	return cfg, nil
}

// resolve picks a setting's value: the environment, then the file, then
// the default. ok is false when none of them sets it.
func resolve(s *setting, lookupEnv func(string) (string, bool), fileVals fileValues) (value, bool) {
	if raw, ok := lookupEnv(s.env); ok {
		v := value{from: s.env}
		if s.list {
			v.items = splitList(raw)
		} else {
			v.text = strings.TrimSpace(raw)
		}
		if !v.isEmpty(s.list) {
			return v, true
		}
	}
	if v, ok := fileVals[s.key]; ok && !v.isEmpty(s.list) {
		return v, true
	}
	if s.fallback != "" {
		return value{text: s.fallback, items: splitList(s.fallback), from: "default for " + s.key}, true
	}
	return value{}, false
}

// problemLines splits an apply error into one line per problem.
func problemLines(err error) []string {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		var lines []string
		for _, e := range joined.Unwrap() {
			lines = append(lines, problemLines(e)...)
		}
		return lines
	}
	return []string{err.Error()}
}

// scrub replaces any secret value that slipped into a problem. The apply
// functions for secrets never quote their input; this guards against a
// future one that does, or a secret pasted into the wrong setting.
func scrub(problems, secretValues []string) []string {
	for i, p := range problems {
		for _, s := range secretValues {
			if len(s) >= 4 {
				p = strings.ReplaceAll(p, s, secrets.Redacted)
			}
		}
		problems[i] = p
	}
	return problems
}
