package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeSpan is a Markdown code span's text.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// TestAsksNameToolsThatExist checks the README's "What to ask" table: each
// tool a column names is a tool of that column's connector in the
// generated docs/tools.md, and each entity named beside an Acumatica tool
// appears in that reference, so the table cannot drift from the catalogue.
func TestAsksNameToolsThatExist(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := os.ReadFile("tools.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### What to ask\n")
	if !ok {
		t.Fatal(`README.md has no "### What to ask" section`)
	}
	section, _, _ = strings.Cut(section, "\n#")
	connectors := []string{"frappe", "acumatica"}
	checked := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) != 3 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") || strings.TrimSpace(cells[0]) == "Ask" {
			continue
		}
		for i, conn := range connectors {
			for _, m := range codeSpan.FindAllStringSubmatch(cells[i+1], -1) {
				name := m[1]
				checked++
				if strings.Contains(name, "_") {
					if !strings.Contains(string(tools), `<a id="`+conn+`-`+name+`"></a>`) {
						t.Errorf("README's asks name %s under %s, which docs/tools.md does not list as a %s tool", name, conn, conn)
					}
					continue
				}
				if !strings.Contains(string(tools), name) {
					t.Errorf("README's asks name the entity %s, which docs/tools.md never mentions", name)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("found only %d names in the README's asks table; has its layout changed?", checked)
	}
}
