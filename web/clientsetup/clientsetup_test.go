package clientsetup

import (
	"os"
	"strings"
	"testing"
)

const (
	readmePath  = "../../README.md"
	beginMarker = "<!-- clientsetup:begin (generated from web/clientsetup; ERPGATE_UPDATE_README=1 go test ./web/clientsetup rewrites it) -->\n"
	endMarker   = "<!-- clientsetup:end -->"
	readmeURL   = "https://<gateway>/sites/<slug>/mcp"
)

// The README's client list is the one the pages show, for the README's
// placeholder URL.
func TestREADMEIsGenerated(t *testing.T) {
	raw, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, beginMarker), strings.Index(readme, endMarker)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the clientsetup markers")
	}
	want := Markdown(readmeURL)
	got := readme[i+len(beginMarker) : j]
	if got == want {
		return
	}
	if os.Getenv("ERPGATE_UPDATE_README") == "1" {
		if err := os.WriteFile(readmePath, []byte(readme[:i+len(beginMarker)]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's client list differs from web/clientsetup's; run ERPGATE_UPDATE_README=1 go test ./web/clientsetup\n got:\n%s\nwant:\n%s", got, want)
}

func TestHTMLEscapesAndFillsTheURL(t *testing.T) {
	h := string(HTML(`https://gw.example/sites/a"b/mcp`))
	if strings.Contains(h, `a"b`) || !strings.Contains(h, "https://gw.example/sites/a&#34;b/mcp") {
		t.Errorf("URL not escaped:\n%s", h)
	}
	for _, name := range []string{"Claude (claude.ai, Claude Desktop)", "Claude Code", "ChatGPT", "Codex CLI and the Codex app", "VS Code (Copilot agent mode)"} {
		if !strings.Contains(h, "<strong>"+name+":</strong>") {
			t.Errorf("no %s", name)
		}
	}
	if strings.Contains(h, "{{URL}}") {
		t.Error("a placeholder was left")
	}
}
