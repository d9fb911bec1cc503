// Package docs holds erpgate's documentation; its test checks that the
// relative links of README.md and docs/*.md, and their #anchors, resolve.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	// mdLink is an inline Markdown link's target, without a title.
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// htmlAnchor is an explicit anchor, as docs/tools.md writes them.
	htmlAnchor = regexp.MustCompile(`<a id="([^"]+)"></a>`)
	heading    = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	fence      = regexp.MustCompile("(?ms)^```.*?^```")
	// slugDrop is what GitHub drops from a heading to make its anchor.
	slugDrop = regexp.MustCompile(`[^\p{L}\p{N}_ -]`)
)

// anchors returns the anchors of a Markdown file as GitHub makes them:
// each heading lower-cased, punctuation dropped, spaces made dashes,
// repeats numbered; and explicit <a id> anchors.
func anchors(text string) map[string]bool {
	text = fence.ReplaceAllString(text, "")
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(text, -1) {
		h := htmlAnchor.ReplaceAllString(m[1], "")
		slug := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// TestLinksResolve checks every relative link of README.md and docs/*.md:
// the file it names exists and, for a Markdown file, so does its #anchor.
func TestLinksResolve(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "README.md"))
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := fence.ReplaceAllString(string(data), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s: link %s: %s does not exist", file, target, resolved)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			body, err := os.ReadFile(resolved)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(body))[anchor] {
				t.Errorf("%s: link %s: %s has no anchor #%s", file, target, resolved, anchor)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d relative links found; is the link pattern still right?", checked)
	}
}
