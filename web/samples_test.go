package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"assay/internal/pgtest"
	"assay/store"
	"assay/tally"
	"assay/web"
)

// sixSamples stores a run of six QA samples under two conditions, three
// repetitions each, where every sample stands out in one way.
func sixSamples(t *testing.T) (*browser, *store.DB, *storedRun) {
	t.Helper()
	b, db := newServer(t, web.Config{})
	data := jsonl(
		map[string]any{"id": "q1", "question": "How much of it is left?", "answer": "50% of it"},
		map[string]any{"id": "q2", "question": "Who wrote Hamlet?", "answer": "Shakespeare"},
		map[string]any{"id": "q3", "question": "What is 6 x 7?", "answer": "42"},
		map[string]any{"id": "q4", "question": "Where is the Eiffel Tower?", "answer": "Paris"},
		map[string]any{"id": "q5", "question": "What is the boiling point of water?", "answer": "100 °C at sea level"},
		map[string]any{"id": "q6", "question": "What drives Photosynthesis?", "answer": "Light"},
	)
	return b, db, storeRun(t, db, "six.jsonl", data, []string{"baseline", "tools"}, 3, sixResults)
}

func sixResults(s store.Sample, cond string, rep int) store.Result {
	base := cond == "baseline"
	switch {
	case s.SampleID == "q2" && base:
		return answered("Marlowe, probably.", rubric([]float64{1, 2, 1}[rep-1], 4, 4))
	case s.SampleID == "q3" && !base:
		return answered("**42**, I think.", rubric(4, []float64{1, 5, 3}[rep-1], 4))
	case s.SampleID == "q4" && base && rep == 2:
		return answered("In Paris; it was moved from Rome in 1950.", rubric(3, 4, 4, "The Eiffel Tower was moved from Rome in 1950."))
	case s.SampleID == "q5" && !base && rep == 2:
		return store.Result{Error: "agent: 500 Internal Server Error after 3 attempts", Attempts: 3, LatencyMS: 30000}
	case s.SampleID == "q5" && base && rep == 1:
		return answered("100 °C.", store.Judgement{Evaluator: "rubric", Error: "judge: malformed JSON after 2 attempts", Raw: "I think it is fine."})
	case s.SampleID == "q6" && !base:
		return answered("Chlorophyll absorbs light.", rubric(4, 4, 4))
	case s.SampleID == "q1" && !base && rep == 1:
		r := answered("Half of it is left.", rubric(4, 4, 4))
		r.ToolCalls = []store.ToolCall{
			{Turn: 1, Server: "everything", Tool: "echo", Arguments: json.RawMessage(`{"message":"hi"}`), Result: "Echo: hi", DurationMS: 12},
			{Turn: 2, Server: "everything", Tool: "add", Arguments: json.RawMessage(`{"a":"x"}`), Result: "invalid arguments: a is not a number", IsError: true, DurationMS: 3},
			{Turn: 3, Tool: "Bash", Arguments: json.RawMessage(`{"command":"ls /"}`), Result: "Permission to use Bash has been denied.", IsError: true, Denied: true},
		}
		return r
	case base:
		return answered("The answer is right.", rubric(5, 5, 5))
	}
	return answered("The answer is close.", rubric(4, 4, 4))
}

// tableRows lists the samples table as "sample/condition".
func tableRows(doc *goquery.Document) []string {
	var out []string
	doc.Find("#samples tbody tr").Each(func(_ int, tr *goquery.Selection) {
		out = append(out, strings.TrimSpace(tr.Find("td").Eq(0).Text())+"/"+strings.TrimSpace(tr.Find("td").Eq(2).Text()))
	})
	return out
}

func samplesPath(sr *storedRun, query string) string {
	return fmt.Sprintf("/runs/%d/samples%s", sr.Run.ID, query)
}

func TestSamplesTableShowsMeanAndStdPerSampleAndCondition(t *testing.T) {
	b, _, sr := sixSamples(t)
	resp, doc := b.get(samplesPath(sr, ""))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	rows := tableRows(doc)
	want := []string{"q1/baseline", "q1/tools", "q2/baseline", "q2/tools", "q3/baseline", "q3/tools",
		"q4/baseline", "q4/tools", "q5/baseline", "q5/tools", "q6/baseline", "q6/tools"}
	if !slices.Equal(rows, want) {
		t.Fatalf("rows %v, want %v", rows, want)
	}
	var heads []string
	doc.Find("#samples thead th").Each(func(_ int, th *goquery.Selection) { heads = append(heads, strings.Fields(th.Text())[0]) })
	if !slices.Equal(heads, []string{"Sample", "Question", "Condition", "factual", "completeness", "helpfulness", "Spread", "Errors", "Claims"}) {
		t.Errorf("headers %v", heads)
	}
	q2 := doc.Find("#samples tbody tr").Eq(2)
	if cell := strings.Join(strings.Fields(q2.Find("td").Eq(3).Text()), " "); cell != "1.33 ± 0.58" {
		t.Errorf("q2 baseline factual_adherence %q, want 1.33 ± 0.58", cell)
	}
	if q := text(doc, "#samples tbody tr:nth-child(3) td.question"); !strings.Contains(q, "Who wrote Hamlet?") || !strings.Contains(q, "Shakespeare") {
		t.Errorf("question cell %q", q)
	}
	q5 := doc.Find("#samples tbody tr").Eq(8)
	if e := strings.Join(strings.Fields(q5.Find("td").Eq(7).Text()), " "); e != "0 + 1 judge" {
		t.Errorf("q5 baseline errors %q", e)
	}
	if c := strings.TrimSpace(doc.Find("#samples tbody tr").Eq(6).Find("td").Eq(8).Text()); c != "1" {
		t.Errorf("q4 baseline claims %q", c)
	}
	href, _ := q2.Find("a.sample-link").Attr("href")
	if want := fmt.Sprintf("/runs/%d/samples/%d#c-baseline", sr.Run.ID, sr.Samples["q2"].ID); href != want {
		t.Errorf("sample link %q, want %q", href, want)
	}
	if c := text(doc, "#sample-count"); c != "12 rows" {
		t.Errorf("count %q", c)
	}
}

func TestSamplesFilters(t *testing.T) {
	b, _, sr := sixSamples(t)
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"condition", "condition=tools", []string{"q1/tools", "q2/tools", "q3/tools", "q4/tools", "q5/tools", "q6/tools"}},
		{"any metric below", "below=2", []string{"q2/baseline"}},
		{"one metric below", "metric=rubric.completeness&below=3.5", []string{"q3/tools"}},
		{"high spread", "spread=1.5", []string{"q3/tools"}},
		{"high spread of one metric", "metric=rubric.factual_adherence&spread=1", []string{"q4/baseline"}},
		{"unverified claims", "claims=1", []string{"q4/baseline"}},
		{"errors", "errors=1", []string{"q5/baseline", "q5/tools"}},
		{"search question, any case", "q=photosynth", []string{"q6/baseline", "q6/tools"}},
		{"search response", "q=CHLOROPHYLL", []string{"q6/tools"}},
		{"search golden answer, % literal", "q=0%25", []string{"q1/baseline", "q1/tools"}},
		{"search _ literal", "q=_", nil},
		{"together", "condition=tools&errors=1", []string{"q5/tools"}},
		{"unparsable threshold ignored", "below=abc", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, doc := b.get(samplesPath(sr, "?"+tc.query))
			got := tableRows(doc)
			if tc.name == "unparsable threshold ignored" {
				if len(got) != 12 {
					t.Errorf("%d rows, want all 12", len(got))
				}
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("rows %v, want %v", got, tc.want)
			}
			if len(tc.want) == 0 && !strings.Contains(text(doc, ".empty"), "No sample matches") {
				t.Errorf("no empty message: %q", text(doc, "main"))
			}
		})
	}
}

// A search for a text most responses hold finds the rows one of whose
// responses holds it, with the other repetitions lacking it or failed.
func TestSamplesSearchOfATextMostResponsesHold(t *testing.T) {
	b, db := newServer(t, web.Config{})
	data := jsonl(
		map[string]any{"id": "q1", "question": "How much of it is left?", "answer": "Half"},
		map[string]any{"id": "q2", "question": "Who wrote Hamlet?", "answer": "Shakespeare"},
		map[string]any{"id": "q3", "question": "What is 6 x 7?", "answer": "42"},
		map[string]any{"id": "q4", "question": "Where is the Eiffel Tower?", "answer": "Paris"},
	)
	sr := storeRun(t, db, "four.jsonl", data, []string{"baseline", "tools"}, 3, func(s store.Sample, cond string, rep int) store.Result {
		switch {
		case s.SampleID == "q2" && cond == "baseline":
			return answered("Marlowe, probably.", rubric(1, 1, 1))
		case s.SampleID == "q4" && cond == "baseline" && rep == 2:
			return answered("Paris.", rubric(5, 5, 5))
		case s.SampleID == "q3" && cond == "tools" && rep != 3:
			return store.Result{Error: "agent: 500 Internal Server Error after 3 attempts", Attempts: 3}
		}
		return answered("The answer is "+s.Reference+".", rubric(4, 4, 4))
	})
	// The response index has caught up, as it has with a large run once searched.
	if _, err := tally.Of(db).IndexResponses(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, doc := b.get(samplesPath(sr, "?q=the+ANSWER+is"))
	want := []string{"q1/baseline", "q1/tools", "q2/tools", "q3/baseline", "q3/tools", "q4/baseline", "q4/tools"}
	if got := tableRows(doc); !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}

func TestSamplesSort(t *testing.T) {
	b, _, sr := sixSamples(t)
	for _, tc := range []struct {
		query string
		first []string
	}{
		{"sort=rubric.factual_adherence", []string{"q2/baseline", "q1/tools", "q2/tools"}},
		{"sort=rubric.factual_adherence&dir=desc", []string{"q1/baseline", "q3/baseline", "q5/baseline"}},
		{"sort=spread&dir=desc", []string{"q3/tools", "q4/baseline", "q2/baseline"}},
		{"sort=errors&dir=desc", []string{"q5/baseline", "q5/tools", "q1/baseline"}},
		{"sort=claims&dir=desc", []string{"q4/baseline", "q1/baseline"}},
		{"sort=condition", []string{"q1/baseline", "q2/baseline", "q3/baseline"}},
		{"sort=condition&dir=desc", []string{"q1/tools", "q2/tools", "q3/tools"}},
		{"sort=sample&dir=desc", []string{"q6/baseline", "q6/tools", "q5/baseline"}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			_, doc := b.get(samplesPath(sr, "?"+tc.query))
			if got := tableRows(doc); !slices.Equal(got[:len(tc.first)], tc.first) {
				t.Errorf("rows begin %v, want %v", got[:len(tc.first)], tc.first)
			}
		})
	}
}

func TestSamplesSortByClickingHeaders(t *testing.T) {
	b, _, sr := sixSamples(t)
	_, doc := b.get(samplesPath(sr, "?condition=baseline"))
	if s, _ := doc.Find("#samples th").First().Attr("aria-sort"); s != "ascending" {
		t.Errorf("sample column aria-sort %q, want ascending by default", s)
	}
	header := func(doc *goquery.Document, label string) *goquery.Selection {
		return doc.Find("#samples thead th").FilterFunction(func(_ int, th *goquery.Selection) bool {
			return strings.HasPrefix(strings.TrimSpace(th.Text()), label)
		})
	}
	href, _ := header(doc, "factual").Find("a").Attr("href")
	_, doc = b.get(href)
	if got := tableRows(doc); got[0] != "q2/baseline" || len(got) != 6 {
		t.Errorf("after clicking factual adherence: %v (the filter must stay)", got)
	}
	if s, _ := header(doc, "factual").Attr("aria-sort"); s != "ascending" {
		t.Errorf("aria-sort %q", s)
	}
	href, _ = header(doc, "factual").Find("a").Attr("href")
	_, doc = b.get(href)
	if s, _ := header(doc, "factual").Attr("aria-sort"); s != "descending" || tableRows(doc)[5] != "q2/baseline" {
		t.Errorf("clicked twice: aria-sort %q, rows %v", s, tableRows(doc))
	}
}

func TestSamplesPagination(t *testing.T) {
	b, db := newServer(t, web.Config{})
	var rows []map[string]any
	for i := 1; i <= 60; i++ {
		rows = append(rows, map[string]any{"id": fmt.Sprintf("s%02d", i), "question": fmt.Sprintf("Question %d?", i), "answer": "yes"})
	}
	sr := storeRun(t, db, "sixty.jsonl", jsonl(rows...), []string{"only"}, 1, func(store.Sample, string, int) store.Result {
		return answered("yes", rubric(5, 5, 5))
	})
	_, doc := b.get(samplesPath(sr, "?sort=sample&dir=desc"))
	if got := tableRows(doc); len(got) != 50 || got[0] != "s60/only" || got[49] != "s11/only" {
		t.Fatalf("page 1: %d rows from %v", len(got), got[:1])
	}
	if p := text(doc, ".pager span"); p != "Page 1 of 2 · 60 in all" {
		t.Errorf("pager %q", p)
	}
	next, ok := doc.Find(".pager a").Last().Attr("href")
	if !ok || !strings.Contains(next, "sort=sample") || !strings.Contains(next, "dir=desc") || !strings.HasSuffix(next, "page=2") {
		t.Fatalf("next page link %q keeps neither the sort nor the page", next)
	}
	_, doc = b.get(next)
	if got := tableRows(doc); len(got) != 10 || got[0] != "s10/only" || got[9] != "s01/only" {
		t.Errorf("page 2: %v", got)
	}
	if href, _ := doc.Find("a.sample-link").First().Attr("href"); !strings.Contains(href, "page=2") {
		t.Errorf("a sample link %q does not lead back to page 2", href)
	}
	_, doc = b.get(samplesPath(sr, "?page=99"))
	if got := tableRows(doc); len(got) != 10 {
		t.Errorf("page 99 shows %d rows, want the last page's 10", len(got))
	}
}

// TestSamplesURLRoundTrip loads a view from its URL, then submits its own
// filter form as a browser would: the same view comes back.
func TestSamplesURLRoundTrip(t *testing.T) {
	b, _, sr := sixSamples(t)
	query := "condition=baseline&metric=rubric.factual_adherence&below=4.5&spread=0.1&q=wh&sort=spread&dir=desc"
	_, doc := b.get(samplesPath(sr, "?"+query))
	want := tableRows(doc)
	if !slices.Equal(want, []string{"q4/baseline", "q2/baseline"}) {
		t.Fatalf("rows %v", want)
	}
	for sel, v := range map[string]string{"#condition option[selected]": "baseline", "#metric option[selected]": "rubric.factual_adherence"} {
		if got, _ := doc.Find(sel).Attr("value"); got != v {
			t.Errorf("%s = %q, want %q", sel, got, v)
		}
	}
	for id, v := range map[string]string{"below": "4.5", "spread": "0.1", "q": "wh"} {
		if got, _ := doc.Find("#" + id).Attr("value"); got != v {
			t.Errorf("#%s = %q, want %q", id, got, v)
		}
	}
	form := url.Values{}
	doc.Find("#sample-filter input, #sample-filter select").Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("name")
		switch {
		case goquery.NodeName(s) == "select":
			v, _ := s.Find("option[selected]").Attr("value")
			form.Set(name, v)
		case s.AttrOr("type", "") == "checkbox":
			if _, on := s.Attr("checked"); on {
				form.Set(name, s.AttrOr("value", ""))
			}
		default:
			form.Set(name, s.AttrOr("value", ""))
		}
	})
	action, _ := doc.Find("#sample-filter").Attr("action")
	_, again := b.get(action + "?" + form.Encode())
	if got := tableRows(again); !slices.Equal(got, want) {
		t.Errorf("submitted form gives %v, want %v", got, want)
	}
	for _, sel := range []string{"#samples thead th a", "a.sample-link"} {
		doc.Find(sel).Each(func(_ int, a *goquery.Selection) {
			if href := a.AttrOr("href", ""); !strings.Contains(href, "condition=baseline") || !strings.Contains(href, "below=4.5") {
				t.Errorf("%s %q loses the filter", sel, href)
			}
		})
	}
}

func TestSamplesOfRunWithoutResults(t *testing.T) {
	b, db := newServer(t, web.Config{})
	sr := storeRun(t, db, "none.jsonl", jsonl(map[string]any{"id": "n1", "question": "Q?", "answer": "A"}), []string{"c"}, 1,
		func(store.Sample, string, int) store.Result { return store.Result{} })
	_, doc := b.get(samplesPath(sr, ""))
	if e := text(doc, ".empty"); e != "This run has no result yet." {
		t.Errorf("samples table of an empty run: %q", e)
	}
	_, doc = b.get(fmt.Sprintf("/runs/%d/samples/%d", sr.Run.ID, sr.Samples["n1"].ID))
	if e := text(doc, ".empty"); e != "This run has no result for this sample yet." || text(doc, "#question .text") != "Q?" {
		t.Errorf("sample page of an empty run: %q, question %q", e, text(doc, "#question"))
	}
}

// A finished run's samples table, made in the background once its report
// is sent, is kept in the database: a server started later shows the same
// table, read from it.
func TestSamplesTableKeptForTheNextServer(t *testing.T) {
	b, db, sr := sixSamples(t)
	b.get(fmt.Sprintf("/runs/%d", sr.Run.ID))
	raw, err := pgtest.OpenRaw(db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	deadline := time.Now().Add(30 * time.Second)
	for kept := 0; kept == 0; time.Sleep(5 * time.Millisecond) {
		if err := raw.QueryRow(`SELECT count(*) FROM sample_stats_kept WHERE run_id = $1`, sr.Run.ID).Scan(&kept); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the finished run's samples table was not kept")
		}
	}
	_, first := b.get(samplesPath(sr, ""))
	later, err := web.New(db, web.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(later.Handler())
	defer srv.Close()
	b2 := &browser{t: t, srv: srv, http: &http.Client{}}
	_, again := b2.get(samplesPath(sr, ""))
	table := func(doc *goquery.Document) string {
		return strings.Join(strings.Fields(doc.Find("#samples").Text()), " ")
	}
	if table(first) == "" || table(again) != table(first) {
		t.Fatalf("the next server's table:\n%s\nthe first's:\n%s", table(again), table(first))
	}
}
