package assay_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README is a front page — at most 300 lines — and every link between
// the README and the guide leads to a file there is.
func TestTheDocsLinkToFilesThereAre(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 300 {
		t.Errorf("README.md is %d lines: a front page is at most 300; move the rest into docs/guide", n)
	}
	pages, _ := filepath.Glob("docs/*.md")
	guide, _ := filepath.Glob("docs/guide/*.md")
	link := regexp.MustCompile(`\]\(([^)#\s]+)(?:#[^)]*)?\)`)
	for _, page := range append(append([]string{"README.md"}, pages...), guide...) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			if strings.HasPrefix(m[1], "http") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), m[1])); err != nil {
				t.Errorf("%s links to %s, which is not there", page, m[1])
			}
		}
	}
	if len(guide) < 8 {
		t.Errorf("the guide has %d pages", len(guide))
	}
}
