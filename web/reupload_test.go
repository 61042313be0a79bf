package web_test

import (
	"strings"
	"testing"

	"assay/web"
)

// Uploading bytes again with another kind or keys says what was not applied
// and how to read them another way, instead of silently opening the old dataset.
func TestReuploadWithOtherSettingsSaysSo(t *testing.T) {
	b, _ := newServer(t, web.Config{})
	data := []byte("{\"prompt\": \"2+2?\", \"response\": \"4\", \"question\": \"x\", \"answer\": \"y\"}\n")
	b.get("/datasets")
	first, _ := b.upload("qa.jsonl", data, nil)
	resp, doc := b.upload("qa.jsonl", data, map[string]string{"question_key": "prompt", "answer_key": "response"})
	msg := text(doc, ".flash.warn")
	if resp.Request.URL.Path != first.Request.URL.Path || !strings.Contains(msg, `question key "prompt" (it is "question")`) ||
		!strings.Contains(msg, `answer key "response" (it is "answer")`) || !strings.Contains(msg, "delete this dataset") {
		t.Errorf("at %s: %q", resp.Request.URL, msg)
	}
	_, doc = b.upload("qa.jsonl", data, nil)
	if got := text(doc, ".flash.info"); !strings.Contains(got, "uploaded before") || doc.Find(".flash.warn").Length() != 0 {
		t.Errorf("the same upload again: %q", got)
	}
}
