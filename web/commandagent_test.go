package web_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"assay/store"
	"assay/tally"
	"assay/web"
)

func TestRunFormLaunchesACommandAgent(t *testing.T) {
	script := filepath.Join(t.TempDir(), "agent.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"You asked: $1\"\n"), 0o755)
	f := newRunServer(t, rubricAgent("unused"))
	form := f.runForm(f.qaDataset(2), f.conditions("baseline"))
	form.Set("repetitions", "1")
	form.Set("agent_type", "command")
	form.Set("agent_command", script+"\r\n{query}\r\n")
	form.Set("agent_model", "")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)
	results, _ := f.db.Results(context.Background(), id)
	if len(results) != 2 || !strings.HasPrefix(results[0].Response, "You asked: ") || results[0].Error != "" {
		t.Fatalf("the command answered: %+v", results)
	}
	_, doc := f.get("/runs/" + strconv.FormatInt(id, 10))
	if got := text(doc, "#agent-command"); got != script+" {query}" {
		t.Errorf("the report names the command: %q", got)
	}
	resp, doc := f.postForm("/runs/"+strconv.FormatInt(id, 10)+"/shares", url.Values{})
	link := doc.Find("input[readonly]").First().AttrOr("value", "")
	if i := strings.Index(link, "/r/"); i >= 0 {
		_, shared := f.get(link[i:])
		if strings.Contains(shared.Text(), script) {
			t.Error("a shared report must not show the agent's command line")
		}
	} else {
		t.Fatalf("no share link on %s", resp.Request.URL)
	}
}

func TestRunFormNeedsTheCommand(t *testing.T) {
	f := newRunServer(t, rubricAgent("unused"))
	form := f.runForm(f.qaDataset(1), f.conditions("baseline"))
	form.Set("agent_type", "command")
	f.get("/runs/new")
	resp, doc := f.postForm("/runs", form)
	if resp.StatusCode != 422 || !strings.Contains(text(doc, "#form-error"), "Agent command") {
		t.Fatalf("got %d %q", resp.StatusCode, text(doc, "#form-error"))
	}
	if v, _ := doc.Find(`input[name=agent_type][value=command]`).Attr("checked"); v == "" && doc.Find(`input[name=agent_type][value=command][checked]`).Length() == 0 {
		t.Error("the refused form keeps the command agent chosen")
	}
}

func TestRunFormStartsNoCommandUnlessAllowed(t *testing.T) {
	f := newRunServer(t, rubricAgent("unused"), func(c *web.Config) { c.AllowCommandAgents = false })
	form := f.runForm(f.qaDataset(1), f.conditions("baseline"))
	_, doc := f.get("/runs/new")
	if !strings.Contains(text(doc, "#command-agents-off"), "--allow-command-agents") {
		t.Errorf("the form should say how to allow command agents: %q", text(doc, "#command-agents-off"))
	}
	if doc.Find(`input[name=agent_type][value=command][disabled]`).Length() != 1 {
		t.Error("the command choice should be disabled")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	form.Set("agent_type", "command")
	form.Set("agent_command", "/bin/sh\n-c\ntouch "+marker)
	resp, doc := f.postForm("/runs", form)
	if resp.StatusCode != 422 || !strings.Contains(text(doc, "#form-error"), "--allow-command-agents") {
		t.Fatalf("got %d %q", resp.StatusCode, text(doc, "#form-error"))
	}
	if runs, _ := tally.Of(f.db).Runs(context.Background()); len(runs) != 0 {
		t.Errorf("%d runs made", len(runs))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}
