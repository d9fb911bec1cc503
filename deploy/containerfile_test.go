package deploy_test

import (
	"os"
	"strings"
	"testing"
)

// TestContainerfileStartsWithFrom reads the Containerfile as the Dockerfile
// reference has it: before the first FROM only comments, blank lines and ARG
// may stand. podman builds a file with another instruction there (it drops
// it), but Docker's builder refuses it ("no build stage in current
// context"), so the image would build with one tool only.
func TestContainerfileStartsWithFrom(t *testing.T) {
	data, err := os.ReadFile("../Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	continued := false
	for i, line := range strings.Split(string(data), "\n") {
		text := strings.TrimSpace(line)
		wasContinued := continued
		continued = strings.HasSuffix(text, `\`)
		if wasContinued || text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		word := strings.ToUpper(strings.Fields(text)[0])
		if word == "FROM" {
			return
		}
		if word != "ARG" {
			t.Errorf("Containerfile line %d: %s stands before the first FROM, where only ARG may", i+1, word)
		}
	}
	t.Error("the Containerfile has no FROM")
}
