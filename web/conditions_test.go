package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"assay/web"
)

func conditionForm(name string) url.Values {
	return url.Values{
		"name":                 {name},
		"system_prompt":        {"Use the graph.\nAnswer briefly."},
		"require_mcp_tool_use": {"1"},
		"server_name":          {"graph", "search"},
		"server_transport":     {"stdio", "http"},
		"server_command":       {"node", ""},
		"server_args":          {"dist/index.js\nstdio", ""},
		"server_env":           {"TOKEN=${GRAPH_TOKEN}\nMODE = fast", ""},
		"server_url":           {"", "http://127.0.0.1:8001/mcp"},
		"server_headers":       {"", "Authorization: Bearer ${KEY}"},
	}
}

func TestConditionCreateEditDelete(t *testing.T) {
	b, db := newServer(t, web.Config{})
	b.get("/conditions/new")
	resp, doc := b.postForm("/conditions", conditionForm("with-graph"))
	if resp.Request.URL.Path != "/conditions" || !strings.Contains(text(doc, ".flash"), "Saved condition with-graph") {
		t.Fatalf("after save: %s %q", resp.Request.URL, text(doc, ".flash"))
	}
	row := text(doc, "#conditions tbody tr")
	for _, want := range []string{"with-graph", "graph (stdio)", "search (http)", "tool use"} {
		if !strings.Contains(row, want) {
			t.Errorf("list row %q lacks %q", row, want)
		}
	}
	list, err := db.Conditions(context.Background())
	if err != nil || len(list) != 1 || list[0].Name != "with-graph" {
		t.Fatalf("conditions %+v, %v", list, err)
	}
	c := list[0]
	srv := c.MCPServers[0]
	if srv.Env["TOKEN"] != "${GRAPH_TOKEN}" || srv.Env["MODE"] != "fast" || len(srv.Args) != 2 || c.MCPServers[1].Headers["Authorization"] != "Bearer ${KEY}" {
		t.Fatalf("stored servers: %+v", c.MCPServers)
	}

	editPath := "/conditions/" + strconv.FormatInt(c.ID, 10)
	_, doc = b.get(editPath + "/edit")
	if v, _ := doc.Find("#name").Attr("value"); v != "with-graph" {
		t.Fatalf("edit form name %q", v)
	}
	if got := doc.Find("#servers textarea[name=server_env]").First().Text(); got != "MODE=fast\nTOKEN=${GRAPH_TOKEN}" {
		t.Errorf("edit form env %q", got)
	}
	form := conditionForm("with-graph")
	form.Set("system_prompt", "changed")
	b.postForm(editPath, form)
	c2, _ := db.Condition(context.Background(), c.ID)
	if c2.SystemPrompt != "changed" {
		t.Errorf("edit not saved: %q", c2.SystemPrompt)
	}

	_, doc = b.postForm(editPath+"/delete", url.Values{})
	if !strings.Contains(text(doc, ".flash"), "Deleted") || doc.Find("#conditions").Length() != 0 {
		t.Errorf("after delete: %q", text(doc, ".flash"))
	}
}

func TestConditionFormErrors(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(url.Values)
		status int
		want   string
	}{
		{"bad name", func(f url.Values) { f.Set("name", "With Graph") }, 422, "name:"},
		{"env line", func(f url.Values) { f["server_env"] = []string{"TOKEN", ""} }, 422, "MCP server 1: environment, line 1"},
		{"no command", func(f url.Values) { f["server_command"] = []string{"", ""} }, 422, "MCP server 1: command"},
		{"bad url", func(f url.Values) { f["server_url"] = []string{"", "localhost:8001"} }, 422, "MCP server 2: url"},
		{"duplicate", func(f url.Values) {}, 409, "already exists"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, db := newServer(t, web.Config{})
			b.get("/conditions/new")
			if tc.name == "duplicate" {
				b.postForm("/conditions", conditionForm("with-graph"))
				b.get("/conditions/new")
			}
			form := conditionForm("with-graph")
			tc.edit(form)
			resp, doc := b.postForm("/conditions", form)
			if resp.StatusCode != tc.status || !strings.Contains(text(doc, "#form-error"), tc.want) {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, text(doc, "#form-error"), tc.status, tc.want)
			}
			if doc.Find("#servers .server").Length() != 2 {
				t.Error("the form should keep both servers the user entered")
			}
			want := 0
			if tc.name == "duplicate" {
				want = 1
			}
			if list, _ := db.Conditions(context.Background()); len(list) != want {
				t.Errorf("%d conditions stored, want %d", len(list), want)
			}
		})
	}
}

func TestFormWithoutCSRFIsRefused(t *testing.T) {
	b, db := newServer(t, web.Config{})
	b.get("/conditions/new")
	form := conditionForm("sneaky")
	form.Set("_csrf", "forged")
	resp, _ := b.postForm("/conditions", form)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403", resp.StatusCode)
	}
	if list, _ := db.Conditions(context.Background()); len(list) != 0 {
		t.Fatal("a forged form stored a condition")
	}
}
