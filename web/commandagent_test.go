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
