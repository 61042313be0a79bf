package web_test

import (
	"strings"
	"testing"

	"assay/web"
)

// Uploading bytes again with other keys imports them as another dataset,
// read that way, and says which dataset they also are; the same upload
// again opens it; another name alone is not applied, and says so.
func TestReuploadWithOtherSettingsSaysSo(t *testing.T) {
	b, _ := newServer(t, web.Config{})
	data := []byte("{\"prompt\": \"2+2?\", \"response\": \"4\", \"question\": \"x\", \"answer\": \"y\"}\n")
	b.get("/datasets")
	first, _ := b.upload("qa.jsonl", data, nil)
	resp, doc := b.upload("qa.jsonl", data, map[string]string{"question_key": "prompt", "answer_key": "response"})
	msg := text(doc, ".flash.ok")
	if resp.Request.URL.Path == first.Request.URL.Path || !strings.Contains(msg, "Imported 1 sample as qa") ||
		!strings.Contains(msg, `These bytes are also dataset 1 "qa" (as qa, question key "question", answer key "answer")`) ||
		!strings.Contains(msg, `this dataset reads them as qa, question key "prompt", answer key "response"`) {
		t.Errorf("at %s: %q", resp.Request.URL, msg)
	}
	if q := text(doc, "#samples td:nth-child(2) .text"); q != "2+2?" {
		t.Errorf("the new dataset reads %q as the question, want the prompt", q)
	}
	if _, old := b.get(first.Request.URL.Path); text(old, "#samples td:nth-child(2) .text") != "x" {
		t.Errorf("the first dataset now reads %q as the question", text(old, "#samples td:nth-child(2) .text"))
	}
	again, doc := b.upload("qa.jsonl", data, map[string]string{"question_key": "prompt", "answer_key": "response"})
	if got := text(doc, ".flash.info"); again.Request.URL.Path != resp.Request.URL.Path || !strings.Contains(got, "uploaded before") {
		t.Errorf("the same upload again: at %s, %q", again.Request.URL, got)
	}
	renamed, doc := b.upload("qa.jsonl", data, map[string]string{"name": "other name"})
	if got := text(doc, ".flash.warn"); renamed.Request.URL.Path != first.Request.URL.Path ||
		!strings.Contains(got, `name "other name" (it is "qa")`) {
		t.Errorf("another name alone: at %s, %q", renamed.Request.URL, got)
	}
}
