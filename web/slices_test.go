package web_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// mcqBySubject is an MMLU-shaped dataset: three subjects, three questions
// each, every answer B.
func mcqBySubject() string {
	var b strings.Builder
	for i, subject := range []string{"biology", "algebra", "chemistry"} {
		for k := 1; k <= 3; k++ {
			fmt.Fprintf(&b, `{"id": "m%d", "subject": %q, "question": "Question %d on %s?", "choices": ["w", "r", "x", "y"], "answer": "B"}`+"\n",
				3*i+k, subject, k, subject)
		}
	}
	return b.String()
}

// subjectAgent answers B under the careful prompt, and otherwise only on
// algebra.
func subjectAgent(req *llmtest.ChatRequest) llmtest.Reply {
	careful := strings.Contains(req.Messages[0].Content, "Be careful.")
	last := req.Messages[len(req.Messages)-1].Content
	if careful || strings.Contains(last, "algebra") {
		return llmtest.Reply{Content: "The answer is B."}
	}
	return llmtest.Reply{Content: "The answer is C."}
}

// A report sliced by a metadata field: each metric per value and condition,
// and B − A within each value; the field is kept in the URL. A run launched
// with report.slice_by carries the slices in its summary JSON.
func TestReportBySlice(t *testing.T) {
	f := newRunServer(t, llmtest.JudgeAndAgent(subjectAgent, subjectAgent))
	ds := f.dataset("mmlu.jsonl", mcqBySubject())
	var ids []string
	for _, c := range []struct{ name, prompt string }{{"plain", "Answer."}, {"careful", "Be careful."}} {
		cond := &assay.Condition{Name: c.name, SystemPrompt: c.prompt, MCPServers: []assay.MCPServer{}}
		if err := f.db.CreateCondition(t.Context(), cond); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(cond.ID, 10))
	}
	form := f.runForm(ds, ids)
	form["evaluator"] = []string{"exact_match"}
	form.Set("repetitions", "1")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)

	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if got := doc.Find("#slice option[value=subject]").Text(); got != "subject (3 values)" || doc.Find("#slice-table").Length() != 0 {
		t.Fatalf("before choosing: option %q, table %d", got, doc.Find("#slice-table").Length())
	}
	_, doc = f.get(fmt.Sprintf("/runs/%d?a=plain&b=careful&slice=subject", id))
	rows := map[string][]string{}
	doc.Find("#slice-table tbody tr").Each(func(_ int, s *goquery.Selection) {
		var r []string
		s.Find("td").Each(func(_ int, td *goquery.Selection) { r = append(r, strings.Join(strings.Fields(td.Text()), " ")) })
		rows[r[0]] = r
	})
	// Conditions in the run's order: careful, then plain.
	want := map[string]string{"algebra": "3 1.000 n 3 1.000 n 3", "biology": "3 1.000 n 3 0.000 n 3", "chemistry": "3 1.000 n 3 0.000 n 3"}
	for v, w := range want {
		if got := strings.Join(rows[v][1:], " "); got != w {
			t.Errorf("%s: %q, want %q", v, got, w)
		}
	}
	if order := doc.Find("#slice-table tbody tr td.mono").Text(); order != "algebrabiologychemistry" {
		t.Errorf("slices in order: %q", order)
	}
	paired := cells(doc, "#slice-paired", "biology")
	if len(paired) != 2 || !strings.HasPrefix(paired[1], "+1.000") {
		t.Errorf("careful − plain on biology: %q", paired)
	}
	// The pair turned round: each pair's comparison is its own, however
	// the report keeps what it computed.
	_, turned := f.get(fmt.Sprintf("/runs/%d?a=careful&b=plain&slice=subject", id))
	if paired := cells(turned, "#slice-paired", "biology"); len(paired) != 2 || !strings.HasPrefix(paired[1], "-1.000") {
		t.Errorf("plain − careful on biology: %q", paired)
	}
	if v, _ := doc.Find("#slice-form input[name=a]").Attr("value"); v != "plain" || doc.Find("#chart-slice-1").Length() != 1 {
		t.Errorf("the form keeps the pair (%q) and a chart is drawn", v)
	}
	_, doc = f.get(fmt.Sprintf("/runs/%d?slice=nope", id))
	if !strings.Contains(text(doc, "#slice-message"), `no field "nope"`) {
		t.Errorf("an unknown field: %q", text(doc, "#slice-message"))
	}

	run := map[string]any{"agent": map[string]any{"type": "openai", "model": "agent-model", "base_url": f.fake.URL},
		"execution": map[string]any{"num_repetitions": 1}, "report": map[string]any{"slice_by": "subject"}}
	sliced := f.launchRun(ds, []string{"plain"}, run)
	var sum struct {
		SliceBy string `json:"slice_by"`
		Slices  []struct {
			Value      string `json:"value"`
			Conditions []struct {
				Name    string `json:"name"`
				Metrics []struct {
					Name string     `json:"name"`
					Mean float64    `json:"mean"`
					CI95 [2]float64 `json:"ci95"`
					N    int        `json:"n"`
				} `json:"metrics"`
			} `json:"conditions"`
		} `json:"slices"`
	}
	f.getJSON(fmt.Sprintf("/api/runs/%d", sliced), &sum)
	if sum.SliceBy != "subject" || len(sum.Slices) != 3 || sum.Slices[0].Value != "algebra" {
		t.Fatalf("summary slices: %+v", sum)
	}
	if m := sum.Slices[1].Conditions[0].Metrics[0]; m.Name != "exact_match" || m.Mean != 0 || m.N != 3 {
		t.Errorf("biology under plain: %+v", m)
	}
	if m := sum.Slices[0].Conditions[0].Metrics[0]; m.Mean != 1 {
		t.Errorf("algebra under plain: %+v", m)
	}
}

// The dataset page ranks every finished run's conditions on the headline
// metric, best first, each linking to its run.
func TestDatasetLeaderboard(t *testing.T) {
	f := newRunServer(t, llmtest.JudgeAndAgent(subjectAgent, subjectAgent))
	ds := f.dataset("mmlu.jsonl", mcqBySubject())
	var ids []string
	for _, c := range []struct{ name, prompt string }{{"plain", "Answer."}, {"careful", "Be careful."}} {
		cond := &assay.Condition{Name: c.name, SystemPrompt: c.prompt, MCPServers: []assay.MCPServer{}}
		if err := f.db.CreateCondition(t.Context(), cond); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(cond.ID, 10))
	}
	var runs []int64
	for _, cond := range ids {
		form := f.runForm(ds, []string{cond})
		form["evaluator"] = []string{"exact_match"}
		form.Set("repetitions", "1")
		id := f.launch(form)
		f.waitFor(id, store.RunCompleted)
		runs = append(runs, id)
	}
	_, doc := f.get(fmt.Sprintf("/datasets/%d", ds))
	var got []string
	doc.Find("#leaderboard-1 tbody tr").Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Find("a").Attr("href")
		got = append(got, strings.Join(strings.Fields(s.Find("td").Eq(1).Text()+" "+s.Find("td").Eq(4).Text()+" "+href), " "))
	})
	want := []string{fmt.Sprintf("careful 1.000 /runs/%d", runs[1]), fmt.Sprintf("plain 0.333 /runs/%d", runs[0])}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("leaderboard %q, want %q", got, want)
	}
}
