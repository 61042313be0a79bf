package web_test

import (
	"fmt"
	"strings"
	"testing"

	"assay/runner/llm/llmtest"
	"assay/store"
)

// A math answer's working is shown as text: no emphasis from its
// multiplications, no heading from its "#### N" line.
func TestMathAnswersAreShownAsText(t *testing.T) {
	f := newRunServer(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), llmtest.Text("So 200*40*.01 = 80 and *not* more.\n#### 80")))
	ds := f.dataset("gsm8k.jsonl", `{"question": "What is 1% of 200 times 40?", "answer": "200*40*.01 = <<200*40*.01=80>>80\n#### 80"}`+"\n")
	form := f.runForm(ds, f.conditions("baseline"))
	form.Set("repetitions", "1")
	form.Set("evaluator", "numeric_match")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)
	_, samples := f.get(fmt.Sprintf("/runs/%d/samples", id))
	href, _ := samples.Find("#samples tbody a").First().Attr("href")
	_, doc := f.get(href)
	for _, sel := range []string{".response", "#golden"} {
		html, _ := doc.Find(sel).First().Html()
		if strings.Contains(html, "<em>") || strings.Contains(html, "<h4") || !strings.Contains(doc.Find(sel).First().Text(), "#### 80") {
			t.Errorf("%s: %s", sel, html)
		}
	}
}
