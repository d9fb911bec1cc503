package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestExampleConnectorNeedsOneRegistrationLine holds the goal of the
// connector kit (docs/connectors.md): a connector touches only
// connectors/<erp>/ plus one registration line. The example connector is
// the proof: no Go file outside connectors/example/ imports it but
// connectors_example.go, which is built only with -tags erpgate_example
// and registers it in one statement; it imports nothing of erpgate's but
// its own folder and what a connector may use; and this build (no tag)
// does not serve it, so docs/tools.md does not list it.
func TestExampleConnectorNeedsOneRegistrationLine(t *testing.T) {
	const example = module + "/connectors/example"
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var importers []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			inExample := strings.HasPrefix(rel, "connectors/example/")
			switch {
			case !inExample && (p == example || strings.HasPrefix(p, example+"/")):
				importers = append(importers, rel)
			case inExample && strings.HasPrefix(p, module+"/") && !exampleMayImport(p):
				t.Errorf("%s imports %s: the example connector may use only its own folder and what connectors may use", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cmd/erpgate/connectors_example.go"}; !slices.Equal(importers, want) {
		t.Errorf("the example connector is imported by %v, want only %v", importers, want)
	}

	src, err := os.ReadFile("connectors_example.go")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(fset, "connectors_example.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(src), "//go:build erpgate_example\n") {
		t.Error("connectors_example.go is not built only with -tags erpgate_example")
	}
	if len(f.Decls) != 2 || strings.Count(string(src), "connectorList = append(connectorList,") != 1 {
		t.Errorf("connectors_example.go should be its imports and one init appending to connectorList")
	}

	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(reg.Kinds(), "example") {
		t.Error("a build without -tags erpgate_example serves the example connector")
	}
}

func exampleMayImport(p string) bool {
	local := strings.TrimPrefix(p, module+"/")
	return strings.HasPrefix(local, "connectors/example") || local == "platform/connector" ||
		strings.HasPrefix(local, "platform/connector/") || connectorMayImport[local]
}
