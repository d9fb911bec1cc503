package main

import (
	"bytes"
	"debug/elf"
	"os"
	"strings"
	"testing"
)

// TestReleaseBinaryHasNoSimulators builds the release binary the way an
// operator does (go build ./cmd/erpgate) and reads its symbol table: no
// ERP simulator, no test helper package, no testing package and no dev
// command are linked, and neither of the Acumatica simulator's embedded
// documents (its 2.6 MB OpenAPI document and entity catalogue) is in it.
func TestReleaseBinaryHasNoSimulators(t *testing.T) {
	bin, err := sharedErpgateBinary()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("read %s as ELF: %v", bin, err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("read the symbol table: %v", err)
	}
	if len(syms) < 1000 {
		t.Fatalf("only %d symbols: is the binary stripped?", len(syms))
	}
	offending := map[string]int{}
	for _, s := range syms {
		// Two dependencies import testing (fosite/internal's mocks, the
		// Jaeger exporter's thrift copy), which links its package
		// initialiser and nothing else; any function of it is refused.
		if strings.HasPrefix(s.Name, "testing.") && (elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Name == "testing.init") {
			continue
		}
		if pkg, bad := testOnlyPackage(s.Name); bad {
			offending[pkg]++
		}
	}
	for pkg, n := range offending {
		t.Errorf("the release binary links %s (%d symbols)", pkg, n)
	}

	content, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{
		"../../connectors/acumatica/acumaticatest/data/swagger-Default-24.200.001.json",
		"../../connectors/acumatica/acumaticatest/data/entities-24.200.001.json",
	} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		// A stretch from the middle of the document, far from any text the
		// gateway itself could carry.
		probe := b[len(b)/2 : len(b)/2+512]
		if bytes.Contains(content, probe) {
			t.Errorf("the release binary embeds %s", doc)
		}
	}
	if fi, err := os.Stat(bin); err == nil {
		t.Logf("release binary: %.1f MB", float64(fi.Size())/1e6)
	}
}

// testOnlyPackage reports whether a symbol belongs to a package only
// development and tests need: the simulators and every other *test package
// of this module, the testing package, the dev command and the connectors'
// demo hooks.
func testOnlyPackage(sym string) (string, bool) {
	if strings.HasPrefix(sym, "testing.") {
		return "testing", true
	}
	if strings.HasPrefix(sym, "main.runDev") || strings.HasPrefix(sym, "main.startDemos") || strings.HasPrefix(sym, "main.registerDemo") {
		return "the dev command (main.runDev)", true
	}
	rest, ok := strings.CutPrefix(sym, module+"/")
	if !ok {
		return "", false
	}
	// A connector's demo hook (connector.Demoer) is built only with -tags dev.
	if strings.HasSuffix(rest, ").Demo") {
		return module + "/" + rest, true
	}
	// The package path ends at the first dot after the last slash (of the
	// name without its type arguments).
	if i := strings.IndexByte(rest, '['); i >= 0 {
		rest = rest[:i]
	}
	slash := strings.LastIndexByte(rest, '/')
	dot := strings.IndexByte(rest[slash+1:], '.')
	if dot < 0 {
		return "", false
	}
	pkg := rest[:slash+1+dot]
	if strings.HasSuffix(pkg, "test") {
		return module + "/" + pkg, true
	}
	return "", false
}
