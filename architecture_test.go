package assay_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The chains of packages docs/architecture.md draws point one way: no
// package of a chain imports, directly or not, one drawn before it; and
// each package it names is one of the module's.
func TestTheDependenciesPointOneWay(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Deps \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, list, _ := strings.Cut(line, ":")
		deps[pkg] = strings.Fields(list)
	}
	var chains [][]string
	for _, m := range regexp.MustCompile("`([a-z/]+(?: → [a-z/]+)+)`").FindAllStringSubmatch(string(doc), -1) {
		chains = append(chains, strings.Split(m[1], " → "))
	}
	if len(chains) < 3 {
		t.Fatalf("docs/architecture.md draws %d chains of packages", len(chains))
	}
	for _, chain := range chains {
		for i, later := range chain {
			pkg := "assay/" + later
			if _, ok := deps[pkg]; !ok {
				t.Errorf("%s: %s is no package of the module", strings.Join(chain, " → "), later)
				continue
			}
			for _, earlier := range chain[:i] {
				if slices.Contains(deps[pkg], "assay/"+earlier) {
					t.Errorf("%s: %s imports %s, which is drawn before it", strings.Join(chain, " → "), later, earlier)
				}
			}
			if i > 0 && !slices.Contains(deps["assay/"+chain[i-1]], pkg) {
				t.Errorf("%s: %s does not use %s, as drawn", strings.Join(chain, " → "), chain[i-1], later)
			}
		}
	}
}
