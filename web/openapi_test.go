package web_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"assay/web"
)

var update = flag.Bool("update", false, "write docs/api.md from the OpenAPI document")

type openAPIDoc struct {
	OpenAPI string `json:"openapi"`
	Paths   map[string]map[string]struct {
		Summary     string `json:"summary"`
		Parameters  []struct{ Name, In string }
		RequestBody *struct {
			Content map[string]struct {
				Schema struct {
					Properties map[string]struct{ Type, Description string }
				}
			}
		} `json:"requestBody"`
		Responses map[string]struct{ Description string }
	} `json:"paths"`
}

// GET /api/openapi.json answers without sign-in with an OpenAPI 3.1
// document naming every route of the JSON API, and no other.
func TestTheOpenAPIDocumentNamesEveryRoute(t *testing.T) {
	b, _, _, s := tokenServer(t)
	resp, err := http.Get(b.srv.URL + "/api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc openAPIDoc
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Fatalf("GET /api/openapi.json without a token: %d, openapi %q, %v", resp.StatusCode, doc.OpenAPI, err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			documented[strings.ToUpper(method)+" "+regexp.MustCompile(`\{([a-z_]+)\}`).ReplaceAllString(path, ":$1")] = true
			if op.Summary == "" || len(op.Responses) < 2 {
				t.Errorf("%s %s: summary %q, %d answers", method, path, op.Summary, len(op.Responses))
			}
		}
	}
	var routes []string
	for _, r := range s.Routes() {
		if _, path, _ := strings.Cut(r, " "); strings.HasPrefix(path, "/api/") {
			routes = append(routes, r)
			if !documented[r] {
				t.Errorf("%s is a route the document does not name", r)
			}
		}
	}
	for r := range documented {
		if !slices.Contains(routes, r) {
			t.Errorf("%s is in the document, not a route", r)
		}
	}
}

// apiMarkdown is docs/api.md as the OpenAPI document makes it.
func apiMarkdown(t *testing.T) []byte {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(web.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("# The JSON API\n\n<!-- Generated from GET /api/openapi.json by go test ./web -run TestAPIDocsAreCurrent -update; do not edit. -->\n\n")
	b.WriteString("Every route answers JSON; a failure is `{\"error\": \"…\"}` with its status. On a server with tokens send\n`Authorization: Bearer TOKEN` (an owner's for anything that changes something). `GET /api/openapi.json`\ngives all of this as an OpenAPI 3.1 document, without a token.\n\n")
	b.WriteString("| route | what | body | answers |\n| --- | --- | --- | --- |\n")
	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		methods := make([]string, 0, len(doc.Paths[p]))
		for m := range doc.Paths[p] {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			op := doc.Paths[p][m]
			var body []string
			if op.RequestBody != nil {
				for media, c := range op.RequestBody.Content {
					var fields []string
					for name := range c.Schema.Properties {
						fields = append(fields, "`"+name+"`")
					}
					sort.Strings(fields)
					body = append(body, media+": "+strings.Join(fields, ", "))
				}
			}
			var codes []string
			for code := range op.Responses {
				codes = append(codes, code)
			}
			sort.Strings(codes)
			for i, code := range codes {
				if code[0] == '2' {
					codes[i] = fmt.Sprintf("%s (%s)", code, op.Responses[code].Description)
				}
			}
			fmt.Fprintf(&b, "| `%s %s` | %s | %s | %s |\n", strings.ToUpper(m), p, strings.ReplaceAll(op.Summary, "|", "\\|"),
				strings.Join(body, "; "), strings.ReplaceAll(strings.Join(codes, ", "), "|", "\\|"))
		}
	}
	return b.Bytes()
}

// docs/api.md is the OpenAPI document as it stands.
func TestAPIDocsAreCurrent(t *testing.T) {
	want := apiMarkdown(t)
	path := filepath.Join("..", "docs", "api.md")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Error("docs/api.md is stale: run go test ./web -run TestAPIDocsAreCurrent -update")
	}
}
