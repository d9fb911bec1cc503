package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite generated documentation")

func TestCatalogueDocIsCurrent(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	got := renderCatalogue(reg)
	path := filepath.Join("..", "..", "docs", "tools.md")
	if *updateDocs {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date: run `go tool task docs`", path)
	}
}
