package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/store"
	"assay/web"
)

func samplePath(sr *storedRun, id, query string) string {
	p := fmt.Sprintf("/runs/%d/samples/%d", sr.Run.ID, sr.Samples[id].ID)
	if query != "" {
		p += "?" + query
	}
	return p
}

// result returns the card of one repetition under a condition.
func result(doc *goquery.Document, condition string, rep int) *goquery.Selection {
	return doc.Find(fmt.Sprintf("#c-%s-%d", condition, rep))
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestSamplePageShowsResponsesAndJudgements(t *testing.T) {
	b, _, sr := sixSamples(t)
	resp, doc := b.get(samplePath(sr, "q4", ""))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if q, g := text(doc, "#question"), text(doc, "#golden"); !strings.Contains(q, "Where is the Eiffel Tower?") || !strings.Contains(g, "Paris") {
		t.Errorf("question %q, golden answer %q", q, g)
	}
	if n := doc.Find(".condition-block").Length(); n != 2 {
		t.Errorf("%d condition sections, want 2", n)
	}
	if s := squash(doc.Find("#sample-summary tbody tr").First().Find(".chip").First().Text()); s != "factual adherence 4.33 ± 1.15" {
		t.Errorf("summary of baseline begins %q", s)
	}
	card := result(doc, "baseline", 2)
	if r := squash(card.Find(".response").Text()); r != "In Paris; it was moved from Rome in 1950." {
		t.Errorf("response %q", r)
	}
	var facts []string
	card.Find(".result-facts .item").Each(func(_ int, s *goquery.Selection) { facts = append(facts, squash(s.Text())) })
	if strings.Join(facts, " · ") != "120 in / 45 out · $0.00021 · 1.5 s · 1 call" {
		t.Errorf("facts %q", facts)
	}
	reasoning := card.Find("table.scores tbody tr").Eq(1)
	if m, v, why := text2(reasoning, "td:nth-child(1)"), text2(reasoning, "td:nth-child(2)"), text2(reasoning, "td.reasoning"); m != "completeness" || v != "4" ||
		why != "The completeness reasoning: scored 4 because the response matches the reference." {
		t.Errorf("completeness row: %q %q %q", m, v, why)
	}
	if c := squash(card.Find(".claims li").Text()); c != "The Eiffel Tower was moved from Rome in 1950." {
		t.Errorf("claims %q", c)
	}
	raw := card.Find("details.raw")
	if s := text2(raw, "summary"); s != "Raw judge output" || !strings.Contains(raw.Find("pre").Text(), `"factual_adherence": 3`) {
		t.Errorf("raw disclosure %q: %q", s, raw.Find("pre").Text())
	}
	if _, open := raw.Attr("open"); open {
		t.Error("the raw judge output is open; it belongs behind the disclosure")
	}
	if result(doc, "baseline", 1).Find(".claims").Length() != 0 {
		t.Error("a judgement without claims shows a claims box")
	}
}

// sameQuery reports whether a link carries exactly the given query, in any order.
func sameQuery(href, query string) bool {
	u, err := url.Parse(href)
	want, _ := url.ParseQuery(query)
	return err == nil && reflect.DeepEqual(u.Query(), want)
}

func text2(s *goquery.Selection, sel string) string { return squash(s.Find(sel).Text()) }

func TestSamplePageShowsToolCallsAndErrors(t *testing.T) {
	b, _, sr := sixSamples(t)
	_, doc := b.get(samplePath(sr, "q1", ""))
	calls := result(doc, "tools", 1).Find("ol.tool-calls li")
	if calls.Length() != 3 {
		t.Fatalf("%d tool calls, want 3", calls.Length())
	}
	first, second := calls.Eq(0), calls.Eq(1)
	if h := text2(first, ".call-head"); h != "turn 1 everything · echo 12 ms" {
		t.Errorf("first call %q", h)
	}
	if a := first.Find("pre.args").Text(); !strings.Contains(a, `"message": "hi"`) {
		t.Errorf("arguments %q", a)
	}
	if r := text2(first, "pre.call-result"); r != "Echo: hi" {
		t.Errorf("result %q", r)
	}
	if !second.HasClass("failed") || text2(second, ".badge") != "error" || !strings.Contains(second.Text(), "a is not a number") {
		t.Errorf("failed call: %q", squash(second.Text()))
	}
	// A tool the agent's permissions refused: its name alone, marked so.
	if denied := calls.Eq(2); !denied.HasClass("denied") || text2(denied, ".call-head") != "turn 3 Bash permission denied" ||
		!strings.Contains(denied.Text(), "Permission to use Bash has been denied.") {
		t.Errorf("denied call: %q", squash(denied.Text()))
	}
	if result(doc, "tools", 2).Find("ol.tool-calls").Length() != 0 {
		t.Error("a result without tool calls shows a timeline")
	}

	_, doc = b.get(samplePath(sr, "q5", ""))
	failed := result(doc, "tools", 2)
	if e := text2(failed, ".result-error"); e != "Agent error agent: 500 Internal Server Error after 3 attempts" {
		t.Errorf("agent error %q", e)
	}
	if failed.Find(".response").Length() != 0 || !strings.Contains(text2(failed, ".result-facts"), "3 calls") {
		t.Errorf("errored result: %q", squash(failed.Text()))
	}
	judged := result(doc, "baseline", 1)
	if e := text2(judged, ".judge-error"); e != "Judge error judge: malformed JSON after 2 attempts" {
		t.Errorf("judge error %q", e)
	}
	if r := judged.Find("details.raw pre").Text(); r != "I think it is fine." {
		t.Errorf("raw output of the failed judgement %q", r)
	}
}

func TestSamplePageRendersMarkdown(t *testing.T) {
	b, _, sr := sixSamples(t)
	_, doc := b.get(samplePath(sr, "q3", ""))
	card := result(doc, "tools", 1)
	if s := text2(card, ".response strong"); s != "42" {
		t.Errorf("**42** rendered as %q", card.Find(".response").Text())
	}
	if src := card.Find("details.source pre").Text(); src != "**42**, I think." {
		t.Errorf("source %q", src)
	}
}

func TestSamplePagePreviousAndNext(t *testing.T) {
	b, _, sr := sixSamples(t)
	id := func(s string) string { return fmt.Sprint(sr.Samples[s].ID) }
	for _, tc := range []struct {
		sample, query, prev, next, position string
	}{
		{"q1", "", "", "q2", "Sample 1 of the dataset · 1 of 6"},
		{"q3", "", "q2", "q4", "Sample 3 of the dataset · 3 of 6"},
		{"q6", "", "q5", "", "Sample 6 of the dataset · 6 of 6"},
		// Baseline by factual adherence: q2 (1.33), q4 (4.33), then q1, q3, q5, q6 (5).
		{"q4", "condition=baseline&sort=rubric.factual_adherence", "q2", "q1", "Sample 4 of the dataset · 2 of 6 in the filtered table"},
		{"q1", "condition=baseline&sort=rubric.factual_adherence", "q4", "q3", "Sample 1 of the dataset · 3 of 6 in the filtered table"},
		{"q5", "errors=1", "", "", "Sample 5 of the dataset · 1 of 1 in the filtered table"},
		{"q6", "condition=tools&claims=1", "q5", "", "Sample 6 of the dataset · 6 of 6"}, // not in the table: dataset order
	} {
		t.Run(tc.sample+"?"+tc.query, func(t *testing.T) {
			_, doc := b.get(samplePath(sr, tc.sample, tc.query))
			for sel, want := range map[string]string{"#prev-sample": tc.prev, "#next-sample": tc.next} {
				href, ok := doc.Find(sel).Attr("href")
				switch {
				case want == "" && ok:
					t.Errorf("%s leads to %q at the end of the list", sel, href)
				case want != "" && !strings.HasPrefix(href, fmt.Sprintf("/runs/%d/samples/%s", sr.Run.ID, id(want))):
					t.Errorf("%s = %q, want sample %s", sel, href, want)
				case want != "" && !sameQuery(href, tc.query):
					t.Errorf("%s = %q loses the table's query %q", sel, href, tc.query)
				}
			}
			if p := squash(text(doc, "#sample-position")); p != tc.position {
				t.Errorf("position %q, want %q", p, tc.position)
			}
			back, _ := doc.Find("#back-to-samples").Attr("href")
			if !strings.HasPrefix(back, fmt.Sprintf("/runs/%d/samples", sr.Run.ID)) || !sameQuery(back, tc.query) {
				t.Errorf("back link %q, want the table with %q", back, tc.query)
			}
		})
	}
}

func TestSamplePageKinds(t *testing.T) {
	b, db := newServer(t, web.Config{})
	mcq := storeRun(t, db, "mcq.jsonl", jsonl(map[string]any{"id": "m1", "question": "Which is a prime?",
		"choices": []string{"4", "6", "7", "9"}, "answer": "C"}), []string{"base"}, 1, func(store.Sample, string, int) store.Result {
		return answered("C", store.Judgement{Evaluator: "exact_match", Raw: "C", Scores: []store.Score{{Metric: "exact_match", Value: 1, Reasoning: `pass: extracted "C", reference "C"`}}})
	})
	_, doc := b.get(samplePath(mcq, "m1", ""))
	if c := squash(doc.Find("#choices li.correct").Text()); c != "C. 7 correct" {
		t.Errorf("correct choice %q", c)
	}
	if g := text(doc, "#golden"); !strings.Contains(squash(g), "C — 7") {
		t.Errorf("golden %q", g)
	}
	card := result(doc, "base", 1)
	if x := text2(card, ".extracted"); x != "Extracted C" || card.Find("details.raw").Length() != 0 {
		t.Errorf("deterministic evaluator: extracted %q, raw disclosures %d", x, card.Find("details.raw").Length())
	}

	code := storeRun(t, db, "code.jsonl", jsonl(map[string]any{"task_id": "HumanEval/0", "prompt": "def add(a, b):\n",
		"canonical_solution": "    return a + b\n", "test": "assert add(1, 2) == 3", "entry_point": "add"}), []string{"base"}, 1,
		func(store.Sample, string, int) store.Result { return answered("```python\nreturn a + b\n```") })
	_, doc = b.get(samplePath(code, "HumanEval/0", ""))
	if q, g := doc.Find("#question pre.code").Text(), doc.Find("#golden pre.code").First().Text(); q != "def add(a, b):\n" || g != "    return a + b\n" {
		t.Errorf("code kind: question %q, golden %q", q, g)
	}
	if c := result(doc, "base", 1).Find(".response pre code").Text(); c != "return a + b\n" {
		t.Errorf("code block in the response %q", c)
	}
}

func TestSamplePageNotFound(t *testing.T) {
	b, db, sr := sixSamples(t)
	other := storeRun(t, db, "other.jsonl", jsonl(map[string]any{"id": "o1", "question": "Q?", "answer": "A"}), []string{"x"}, 1,
		func(store.Sample, string, int) store.Result { return answered("A") })
	for _, path := range []string{
		fmt.Sprintf("/runs/%d/samples/%d", sr.Run.ID, other.Samples["o1"].ID), // a sample of another dataset
		fmt.Sprintf("/runs/%d/samples/abc", sr.Run.ID),
		fmt.Sprintf("/runs/%d/samples/%d", sr.Run.ID+100, sr.Samples["q1"].ID),
		fmt.Sprintf("/runs/%d/samples", sr.Run.ID+100),
	} {
		if resp, _ := b.get(path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
}

func TestSamplesThroughShareLink(t *testing.T) {
	b, db, sr := sixSamples(t)
	share, err := db.CreateShare(context.Background(), sr.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	base := "/r/" + share.Token
	resp, doc := b.get(base + "/samples?errors=1")
	if resp.StatusCode != http.StatusOK || len(tableRows(doc)) != 2 {
		t.Fatalf("shared samples: %d, rows %v", resp.StatusCode, tableRows(doc))
	}
	href, _ := doc.Find("a.sample-link").First().Attr("href")
	if !strings.HasPrefix(href, base+"/samples/") {
		t.Fatalf("shared sample link %q", href)
	}
	resp, doc = b.get(href)
	if resp.StatusCode != http.StatusOK || !strings.Contains(text(doc, ".judge-error"), "malformed JSON") {
		t.Fatalf("shared sample page: %d", resp.StatusCode)
	}
	for _, d := range []*goquery.Document{doc} {
		if d.Find("form[method=post]").Length() != 0 || d.Find("header nav").Length() != 0 || d.Find(".shared-label").Length() != 1 {
			t.Error("a shared page shows forms or the app's navigation")
		}
		d.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
			if h := a.AttrOr("href", ""); strings.HasPrefix(h, "/") && !strings.HasPrefix(h, base) {
				t.Errorf("shared page links out of the report: %q", h)
			}
		})
	}
	if err := db.RevokeShare(context.Background(), sr.Run.ID, share.Token); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{base + "/samples", href} {
		if resp, _ := b.get(path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("revoked %s: %d", path, resp.StatusCode)
		}
	}
}

func TestSamplePageRendersTheGoldenAnswerSafely(t *testing.T) {
	b, db := newServer(t, web.Config{})
	data := jsonl(map[string]any{"id": "g1", "question": "How do I log in?",
		"answer": "Run `ocm login` then <script>alert(1)</script> [docs](javascript:alert(2))"})
	sr := storeRun(t, db, "golden.jsonl", data, []string{"baseline"}, 1, func(store.Sample, string, int) store.Result {
		return answered("ok", rubric(4, 4, 4))
	})
	_, doc := b.get(samplePath(sr, "g1", ""))
	golden := doc.Find("#golden-answer")
	if golden.Find("code").Text() != "ocm login" {
		t.Errorf("the golden answer's markdown should render: %q", golden.Text())
	}
	if doc.Find("main script").Length() != 0 || doc.Find(`[href^="javascript:"]`).Length() != 0 {
		t.Error("the golden answer must be sanitized")
	}
	if !strings.Contains(golden.Text(), "<script>alert(1)</script>") {
		t.Errorf("raw HTML in the golden answer shows as text: %q", golden.Text())
	}
}

func TestRetriesAndErrorKindsAreShown(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, samples := handRunIn(t, db, store.RunCompleted)
	r := &store.Result{RunID: id, SampleRow: samples[1], Condition: "baseline", Repetition: 3, Attempts: 3,
		Error: "agent: turn 1: llm: no answer within 2m0s (after 3 attempts)", ErrorKind: store.ErrorTimeout,
		Retries: []string{"attempt 1: no answer within 2m0s; retrying in 1s", "attempt 2: no answer within 2m0s; retrying in 2s"}}
	if _, err := db.SaveResult(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	_, doc := b.get(fmt.Sprintf("/runs/%d/samples/%d", id, samples[1]))
	card := result(doc, "baseline", 3)
	if k := text2(card, ".error-kind"); k != "timeout" {
		t.Errorf("error kind %q", k)
	}
	if got := text2(card, ".retried"); got != "retried 2 times" || card.Find("details.retries li").Length() != 2 {
		t.Errorf("retries %q, %d lines", got, card.Find("details.retries li").Length())
	}
	_, doc = b.get(fmt.Sprintf("/runs/%d", id))
	row := doc.Find("#error-kinds tbody tr").First()
	if c := squash(row.Text()); !strings.Contains(c, "baseline") || !strings.Contains(c, "1 timeout") {
		t.Errorf("errors by kind: %q", c)
	}
}
