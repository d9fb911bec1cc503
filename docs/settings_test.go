package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/erpgate/erpgate/platform/infra/config"
)

var (
	// envName is an erpgate environment variable as the docs write it;
	// ERPGATE_DEV_<KIND>_ADDR, a pattern, matches as ERPGATE_DEV_ and is
	// left out.
	envName = regexp.MustCompile(`\bERPGATE_[A-Z0-9_]+\b`)
	// taskName is a Taskfile task named in a command.
	taskName = regexp.MustCompile("go tool task ([a-z][a-z:-]*)")
)

// prose returns README.md and docs/*.md by name.
func prose(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "README.md"))
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(data)
	}
	return out
}

// goSources returns the text of the main module's Go files, tests
// included, but for this package's own: a variable the docs name that no
// Go file mentions is not erpgate's.
func goSources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".." || path == filepath.Join("..", "deploy") || path == filepath.Join("..", "docs")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestEnvironmentVariablesInDocsExist checks every ERPGATE_ variable that
// README.md and docs/*.md name: a configuration setting, or one a Go file
// of erpgate reads (ERPGATE_CONFIG, the dev command's ports, build tags'
// addresses).
func TestEnvironmentVariablesInDocsExist(t *testing.T) {
	settings := map[string]bool{}
	for _, s := range config.Settings() {
		settings[s.Env] = true
	}
	sources := goSources(t)
	for file, text := range prose(t) {
		for _, name := range envName.FindAllString(text, -1) {
			if strings.HasSuffix(name, "_") || settings[name] {
				continue
			}
			if !strings.Contains(sources, name) {
				t.Errorf("%s names %s, which is no setting and which no Go file mentions", file, name)
			}
		}
	}
}

// TestEverySettingIsDocumented checks that README.md or docs/*.md name each
// setting's environment variable (configs/erpgate.example.yaml, which
// documents every key, has its own test in platform/infra/config).
func TestEverySettingIsDocumented(t *testing.T) {
	var all strings.Builder
	for _, text := range prose(t) {
		all.WriteString(text)
	}
	named := map[string]bool{}
	for _, name := range envName.FindAllString(all.String(), -1) {
		named[name] = true
	}
	for _, s := range config.Settings() {
		if s.Env != "DATABASE_URL" && !named[s.Env] {
			t.Errorf("no document names %s (%s)", s.Env, s.Key)
		}
	}
}

// TestTasksInDocsExist checks that each `go tool task NAME` of README.md and
// docs/*.md is a task of Taskfile.yml.
func TestTasksInDocsExist(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "Taskfile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var taskfile struct {
		Tasks map[string]any `yaml:"tasks"`
	}
	if err := yaml.Unmarshal(data, &taskfile); err != nil {
		t.Fatalf("Taskfile.yml: %v", err)
	}
	found := 0
	for file, text := range prose(t) {
		for _, m := range taskName.FindAllStringSubmatch(text, -1) {
			found++
			if _, ok := taskfile.Tasks[m[1]]; !ok {
				t.Errorf("%s runs go tool task %s; Taskfile.yml has no such task", file, m[1])
			}
		}
	}
	if found < 10 {
		t.Errorf("only %d task commands found; is the pattern still right?", found)
	}
}
