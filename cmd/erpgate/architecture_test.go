package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/erpgate/erpgate"

// TestImportRules enforces the dependency direction of docs/architecture.md,
// so the architecture cannot rot silently. depguard in .golangci.yml holds
// the platform, connector and cmd/ rules too, and alone the mcp-go rule;
// this test alone holds the connectors' allowlist and the page-kit rule:
//   - platform/ never imports connectors/, authserver/ or web/;
//   - a connector uses only an allowlist of platform packages, so never
//     authserver/, web/, mcp-go, pgx or the database packages;
//   - only cmd/ wires everything together: nothing imports cmd/;
//   - the page kit (web/pagekit) is a leaf: it imports nothing of erpgate's,
//     so every package that shows a page can use it.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps=false", "-test", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	checked := 0
	for {
		var p struct {
			ImportPath   string
			Imports      []string
			TestImports  []string
			XTestImports []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(strings.Fields(p.ImportPath)[0], module+"/")
		if strings.HasSuffix(pkg, ".test") {
			continue
		}
		checked++
		imports := append(append(append([]string{}, p.Imports...), p.TestImports...), p.XTestImports...)
		for _, imp := range imports {
			if reason := forbidden(pkg, imp); reason != "" {
				t.Errorf("%s imports %s: %s", pkg, imp, reason)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d packages", checked)
	}
}

func forbidden(pkg, imp string) string {
	local := strings.TrimPrefix(imp, module+"/")
	isLocal := local != imp
	under := func(s, dir string) bool { return s == dir || strings.HasPrefix(s, dir+"/") }
	switch {
	case isLocal && under(local, "cmd") && !under(pkg, "cmd"):
		return "only cmd/ wires things together; nothing may import it"
	case under(pkg, "web/pagekit") && isLocal && !under(local, "web/pagekit"):
		return "the page kit is a leaf: it must not import anything of erpgate's"
	case under(pkg, "platform") && isLocal && (under(local, "connectors") || under(local, "authserver") || under(local, "web")):
		return "platform/ must not depend on connectors/, authserver/ or web/"
	case under(pkg, "connectors"):
		if isLocal && !under(local, "connectors") && !under(local, "platform/connector") && !connectorMayImport[local] {
			return "a connector receives a site, an HTTP client and arguments; of the platform it may use only " + allowedList()
		}
		if strings.HasPrefix(imp, "github.com/mark3labs/mcp-go") || strings.HasPrefix(imp, "github.com/jackc/") {
			return "a connector must not use the MCP library or the database driver"
		}
	}
	return ""
}

// connectorMayImport lists the platform packages outside platform/connector
// (the contract and its helpers, all allowed) that a connector may use: what
// helps it speak to its ERP. The database, the engine, the OAuth server and
// the web layer are out of reach by construction.
var connectorMayImport = map[string]bool{
	"platform/connector/...":  true, // the contract, its helpers and its kit
	"platform/infra/outbound": true,
	"platform/infra/secrets":  true,
	"platform/infra/redact":   true,
}

func allowedList() string {
	var names []string
	for n := range connectorMayImport {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// The page kit rule catches an import of erpgate's own packages, and only
// those.
func TestPageKitRule(t *testing.T) {
	if forbidden("web/pagekit", module+"/platform/infra/secrets") == "" {
		t.Error("the page kit may import platform/infra/secrets")
	}
	if forbidden("web/pagekit", "html/template") != "" || forbidden("web", module+"/web/pagekit") != "" || forbidden("authserver", module+"/web/pagekit") != "" {
		t.Error("the page kit rule refuses an allowed import")
	}
}
