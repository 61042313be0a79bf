package web_test

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay"
	"assay/runner/llm/llmtest"
	"assay/stats"
	"assay/store"
)

var questionNumber = regexp.MustCompile(`What is (\d+) \+`)

// noisyJudge scores completeness by the question (the samples differ) plus
// one point when asked with an odd seed: the judge's own noise.
func noisyJudge(req *llmtest.ChatRequest) llmtest.Reply {
	seed := 0
	if req.Seed != nil {
		seed = *req.Seed
	}
	var q int
	for _, m := range req.Messages {
		if g := questionNumber.FindStringSubmatch(m.Content); g != nil {
			q, _ = strconv.Atoi(g[1])
		}
	}
	answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": 4, "completeness": 1 + q%3 + seed%2,
		"helpfulness_and_clarity": 3, "unverified_claims": []string{}})
	return llmtest.Reply{Content: answer}
}

// The report splits each metric's variance into samples, agent and judge;
// its figures are those recomputed from the JSON export, which carries every
// judge score with its seed.
func TestReportShowsWhereTheVarianceComesFrom(t *testing.T) {
	f := newRunServer(t, llmtest.JudgeAndAgent(noisyJudge, llmtest.Text("An answer.")))
	ds := f.qaDataset(9)
	form := f.runForm(ds, f.conditions("baseline", "careful"))
	form.Set("repetitions", "2")
	form.Set("judge_repetitions", "3")
	form.Set("judge_vary_seed", "1")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)

	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	rows := doc.Find("#variance-table tbody tr")
	if rows.Length() != 6 {
		t.Fatalf("%d rows in the variance table, want 2 conditions × 3 metrics", rows.Length())
	}
	var row []string
	rows.Each(func(_ int, s *goquery.Selection) {
		if strings.TrimSpace(s.Find("td").Eq(0).Text()) == "baseline" && strings.Contains(s.Text(), "completeness") {
			s.Find("td").Each(func(_ int, td *goquery.Selection) { row = append(row, strings.TrimSpace(td.Text())) })
		}
	})
	if len(row) != 7 {
		t.Fatalf("no baseline completeness row: %q", rows.Text())
	}
	if got := doc.Find("#judge-consistency tbody tr").Length(); got != 6 {
		t.Errorf("%d rows of the judge against itself, want 6", got)
	}
	if got := doc.Find(".variance-sentences").Text(); !strings.Contains(got, "part is the largest in every condition · rubric · completeness") {
		t.Errorf("sentences: %q", got)
	}
	// The two answers of a question get the same scores: the agent's part
	// solves below 0, is shown as 0, and the page says so.
	if got := doc.Find(".variance-note").Text(); !strings.Contains(got, "Came out below 0 and shown as 0: the agent part in baseline · rubric · completeness;") {
		t.Errorf("notes: %q", got)
	}
	if doc.Find("#chart-variance-1").Length() != 1 || doc.Find("#chart-variance-2").Length() != 1 {
		t.Error("a stacked chart per condition is missing")
	}

	// Recompute from the export: samples → answers → judge scores.
	resp, err := f.http.Get(f.srv.URL + fmt.Sprintf("/runs/%d/export.json", id))
	if err != nil {
		t.Fatal(err)
	}
	var export struct {
		Results []struct {
			SampleID   string `json:"sample_id"`
			Condition  string `json:"condition"`
			Repetition int    `json:"repetition"`
			Scores     []struct {
				Metric          string  `json:"metric"`
				Value           float64 `json:"value"`
				JudgeRepetition int     `json:"judge_repetition"`
			} `json:"scores"`
			Judgements []struct {
				Seed *int `json:"seed"`
			} `json:"judgements"`
		} `json:"results"`
	}
	json.NewDecoder(resp.Body).Decode(&export)
	resp.Body.Close()
	bySample := map[string]map[int][]float64{}
	seeds := map[int]bool{}
	for _, r := range export.Results {
		for _, j := range r.Judgements {
			seeds[*j.Seed] = true
		}
		if r.Condition != "baseline" {
			continue
		}
		if bySample[r.SampleID] == nil {
			bySample[r.SampleID] = map[int][]float64{}
		}
		for _, s := range r.Scores {
			if s.Metric == "completeness" {
				bySample[r.SampleID][r.Repetition] = append(bySample[r.SampleID][r.Repetition], s.Value)
			}
		}
	}
	if len(seeds) != 3 || !seeds[42] || !seeds[43] || !seeds[44] {
		t.Errorf("the export's seeds: %v", seeds)
	}
	var data [][][]float64
	for _, reps := range bySample {
		var answers [][]float64
		for _, scores := range reps {
			if len(scores) != 3 {
				t.Fatalf("an answer has %d judge scores in the export, want 3", len(scores))
			}
			answers = append(answers, scores)
		}
		data = append(data, answers)
	}
	c := stats.Decompose(data)
	s, a, j := c.Shares()
	want := []string{"baseline", "rubric · completeness", fmt.Sprintf("%.2f", c.Total)}
	for i, w := range want {
		if row[i] != w {
			t.Errorf("column %d: %q, recomputed %q", i, row[i], w)
		}
	}
	for i, share := range []float64{s, a, j} {
		if got := row[3+i]; !strings.HasPrefix(got, fmt.Sprintf("%.0f%% (", 100*share)) {
			t.Errorf("share %d: %q, recomputed %.1f%%", i, got, 100*share)
		}
	}
	if math.Abs(c.Judge-1.0/3) > 1e-9 {
		t.Errorf("the judge's variance %v, want 1/3 (scores x, x+1, x within each answer)", c.Judge)
	}
	if row[6] != "—" {
		t.Errorf("the first condition has no detectable difference from itself: %q", row[6])
	}

	var sum struct {
		Conditions []struct {
			Name    string `json:"name"`
			Metrics []struct {
				Name     string `json:"name"`
				Variance *struct {
					Total, Sample, Agent, Judge float64
				} `json:"variance"`
				MDD *float64 `json:"mdd"`
			} `json:"metrics"`
		} `json:"conditions"`
	}
	f.getJSON(fmt.Sprintf("/api/runs/%d", id), &sum)
	for ci, cond := range sum.Conditions {
		for _, m := range cond.Metrics {
			v := m.Variance
			if v == nil || math.Abs(v.Total-(v.Sample+v.Agent+v.Judge)) > 1e-9 || (m.MDD == nil) != (ci == 0) {
				t.Errorf("%s %s: variance %+v, mdd %v", cond.Name, m.Name, v, m.MDD)
			}
		}
	}
}

// conditionJudge scores completeness by the question, plus 1 + (question
// number mod 2) when the answer was given under the careful prompt, which
// the fake agent repeats.
func conditionJudge(req *llmtest.ChatRequest) llmtest.Reply {
	var q int
	careful := false
	for _, m := range req.Messages {
		if g := questionNumber.FindStringSubmatch(m.Content); g != nil {
			q, _ = strconv.Atoi(g[1])
		}
		careful = careful || strings.Contains(m.Content, "Be careful.")
	}
	c := 1 + q%3
	if careful {
		c += 1 + q%2
	}
	answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": 4, "completeness": c,
		"helpfulness_and_clarity": 3, "unverified_claims": []string{}})
	return llmtest.Reply{Content: answer}
}

// The paired panel says how many samples would detect a difference the
// reader types, and with three conditions tests every pair with Holm's
// adjustment.
func TestPairedPanelPlansSamplesAndAdjustsForManyPairs(t *testing.T) {
	echo := func(req *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: "Said: " + req.Messages[0].Content}
	}
	f := newRunServer(t, llmtest.JudgeAndAgent(conditionJudge, echo))
	ds := f.qaDataset(9)
	var ids []string
	for _, c := range []struct{ name, prompt string }{{"plain", "Answer."}, {"careful", "Be careful."}, {"terse", "Answer tersely."}} {
		cond := &assay.Condition{Name: c.name, SystemPrompt: c.prompt, MCPServers: []assay.MCPServer{}}
		if err := f.db.CreateCondition(t.Context(), cond); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(cond.ID, 10))
	}
	form := f.runForm(ds, ids)
	form.Set("repetitions", "1")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)

	var diffs []float64
	for q := 1; q <= 9; q++ {
		diffs = append(diffs, float64(1+q%2))
	}
	_, sd := stats.Describe(diffs)
	_, doc := f.get(fmt.Sprintf("/runs/%d?a=plain&b=careful&delta=0.5", id))
	row := cells(doc, "#paired-table", "rubric · completeness 1–5")
	if want := strconv.Itoa(stats.SamplesNeeded(sd, 0.5, 0.05, 0.8)); len(row) != 11 || row[10] != want {
		t.Errorf("samples needed for 0.5: %q, want %s in the last column", row, want)
	}
	if want := fmt.Sprintf("± %.2f", stats.MinDetectable(sd, 9, 0.05, 0.8)); row[9] != want {
		t.Errorf("detectable: %q, want %s", row[9], want)
	}
	if row := cells(doc, "#paired-table", "rubric · factual_adherence 1–5"); row[10] != "—" {
		t.Errorf("a metric whose differences do not vary cannot plan: %q", row)
	}
	if v, _ := doc.Find("#needed-form input[name=b]").Attr("value"); v != "careful" || doc.Find("#delta").AttrOr("value", "") != "0.5" {
		t.Errorf("the form forgets the pair or the difference")
	}
	_, doc = f.get(fmt.Sprintf("/runs/%d?delta=lots", id))
	if !strings.Contains(text(doc, "#delta-error"), `"lots" is not a difference`) {
		t.Errorf("a bad difference: %q", text(doc, "#delta-error"))
	}

	rows := doc.Find("#all-pairs tbody tr")
	if rows.Length() != 9 {
		t.Fatalf("%d rows in every pair's table, want 3 pairs × 3 metrics", rows.Length())
	}
	got := map[string][]string{}
	rows.Each(func(_ int, s *goquery.Selection) {
		var r []string
		s.Find("td").Each(func(_ int, td *goquery.Selection) { r = append(r, strings.TrimSpace(td.Text())) })
		got[r[0]+" "+r[1]+" "+r[2]] = r
	})
	// careful − plain on completeness is 1 or 2 on every sample: t is large.
	// The three completeness p-values, Holm-adjusted together, are recomputed.
	means := map[string][]float64{"plain": nil, "careful": nil, "terse": nil}
	for q := 1; q <= 9; q++ {
		base := float64(1 + q%3)
		means["plain"] = append(means["plain"], base)
		means["terse"] = append(means["terse"], base)
		means["careful"] = append(means["careful"], base+float64(1+q%2))
	}
	pairs := [][2]string{{"careful", "plain"}, {"careful", "terse"}, {"plain", "terse"}} // in the run's order of conditions
	var ps []float64
	for _, p := range pairs {
		var d []float64
		for i := range means[p[0]] {
			d = append(d, means[p[1]][i]-means[p[0]][i])
		}
		ps = append(ps, stats.PairedP(d))
	}
	holm := stats.Holm(ps)
	for i, p := range pairs {
		r := got["rubric · completeness "+p[0]+" "+p[1]]
		if r == nil {
			t.Fatalf("no row for %v: %v", p, got)
		}
		want := fmt.Sprintf("%.3f", holm[i])
		if holm[i] < 0.001 {
			want = "< 0.001"
		}
		if r[6] != want {
			t.Errorf("%v: Holm p %q, recomputed %s", p, r[6], want)
		}
	}
	if r := got["rubric · completeness plain terse"]; r[3] != "+0.00" || r[5] != "1.000" {
		t.Errorf("two conditions that score alike: %q", r)
	}
}

// panelJudge scores completeness by the question; the strict judge one
// point lower, the lenient one a point higher when asked with an odd seed
// (its known noise).
func panelJudge(req *llmtest.ChatRequest) llmtest.Reply {
	var q int
	for _, m := range req.Messages {
		if g := questionNumber.FindStringSubmatch(m.Content); g != nil {
			q, _ = strconv.Atoi(g[1])
		}
	}
	c := 2 + q%3
	if req.Model == "strict-model" {
		c--
	} else if req.Seed != nil {
		c += *req.Seed % 2
	}
	answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": 4, "completeness": c,
		"helpfulness_and_clarity": 3, "unverified_claims": []string{}})
	return llmtest.Reply{Content: answer}
}

// A run judged by a panel: the report names the judges, gives each one's
// mean and offset, the sample page sets every judge's scores side by side,
// and the export says which judge gave each score.
func TestAPanelOnTheReportSamplesAndExport(t *testing.T) {
	f := newRunServer(t, llmtest.JudgeAndAgent(panelJudge, llmtest.Text("An answer.")))
	ds := f.qaDataset(6)
	f.conditions("baseline")
	run := map[string]any{"agent": map[string]any{"type": "openai", "model": "agent-model", "base_url": f.fake.URL},
		"judges": []any{map[string]any{"name": "strict", "model": "strict-model", "base_url": f.fake.URL},
			map[string]any{"name": "lenient", "model": "lenient-model", "base_url": f.fake.URL, "vary_seed": true}},
		"judge_repetitions": 3, "execution": map[string]any{"num_repetitions": 1}}
	id := f.launchRun(ds, []string{"baseline"}, run)

	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if got := text(doc, "#judge-panel"); !strings.Contains(got, "strict") || !strings.Contains(got, "lenient-model") || !strings.Contains(got, "the mean of the panel") {
		t.Errorf("the facts' panel: %q", got)
	}
	row := cells(doc, "#judge-panel-table", "baseline")
	var completeness []string
	doc.Find("#judge-panel-table tbody tr").Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(s.Text(), "completeness") {
			s.Find("td").Each(func(_ int, td *goquery.Selection) {
				completeness = append(completeness, strings.Join(strings.Fields(td.Text()), " "))
			})
		}
	})
	// Per answer: strict b−1 three times; lenient b, b+1, b (seeds 42, 43,
	// 44): panel b − 1/3, so the offsets are ∓2/3.
	if len(row) == 0 || len(completeness) != 5 || !strings.HasSuffix(completeness[2], "(-0.67)") || !strings.HasSuffix(completeness[3], "(+0.67)") {
		t.Errorf("the panel's completeness row: %q", completeness)
	}
	if _, err := strconv.ParseFloat(completeness[4], 64); err != nil {
		t.Errorf("alpha between the judges: %q", completeness[4])
	}
	// A judge's name opens the report as that judge alone scored it.
	href, _ := doc.Find("#judge-panel-table thead a").First().Attr("href")
	strictMean := strings.Fields(completeness[2])[0]
	_, one := f.get(href)
	if !strings.Contains(text(one, "#one-judge"), "strict's scores alone") || one.Find("#judge-panel-table").Length() != 0 {
		t.Errorf("the strict judge's report (%s): %q", href, text(one, "#one-judge"))
	}
	var summaryRow []string
	one.Find("#summary tbody tr").First().Find("td").Each(func(_ int, td *goquery.Selection) {
		summaryRow = append(summaryRow, strings.TrimSpace(td.Text()))
	})
	if !slices.Contains(summaryRow, strictMean) {
		t.Errorf("the strict judge's summary %q lacks its panel mean %s", summaryRow, strictMean)
	}
	if resp, _ := f.get(fmt.Sprintf("/runs/%d?judge=nobody", id)); resp.StatusCode != 422 {
		t.Errorf("a judge the panel lacks: %d", resp.StatusCode)
	}
	var judgeShare string
	doc.Find("#variance-table tbody tr").Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(s.Text(), "completeness") {
			judgeShare = strings.TrimSpace(s.Find("td").Eq(5).Text())
		}
	})
	if judgeShare == "—" || strings.HasPrefix(judgeShare, "0%") || judgeShare == "" {
		t.Errorf("the judge's share of completeness: %q", judgeShare)
	}

	samples, _ := f.db.Samples(t.Context(), ds, 0, 0)
	_, doc = f.get(fmt.Sprintf("/runs/%d/samples/%d", id, samples[0].ID))
	var heads []string
	doc.Find(".judge-grid thead th.num").Each(func(_ int, s *goquery.Selection) { heads = append(heads, s.Text()) })
	if strings.Join(heads, "|") != "strict #1|strict #2|strict #3|lenient #1|lenient #2|lenient #3" {
		t.Errorf("the side-by-side grid's columns: %q", heads)
	}
	if n := doc.Find(".judge-grid tbody tr").Length(); n != 3 {
		t.Errorf("%d metrics in the grid, want 3", n)
	}

	resp, err := f.http.Get(f.srv.URL + fmt.Sprintf("/runs/%d/export.json", id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var export struct {
		Results []struct {
			Scores []struct {
				Judge           string `json:"judge"`
				JudgeRepetition int    `json:"judge_repetition"`
			} `json:"scores"`
		} `json:"results"`
	}
	json.NewDecoder(resp.Body).Decode(&export)
	count := map[string]int{}
	for _, r := range export.Results {
		for _, s := range r.Scores {
			count[fmt.Sprintf("%s#%d", s.Judge, s.JudgeRepetition)]++
		}
	}
	if len(count) != 6 || count["strict#0"] != 18 || count["lenient#2"] != 18 {
		t.Errorf("the export's scores by judge and repetition: %v (6 answers × 3 metrics each)", count)
	}
}

// More judges on the run form make a judge panel.
func TestRunFormJudgePanel(t *testing.T) {
	f := newRunServer(t, llmtest.JudgeAndAgent(panelJudge, llmtest.Text("An answer.")))
	ds := f.qaDataset(3)
	form := f.runForm(ds, f.conditions("baseline"))
	form.Set("repetitions", "1")
	form.Set("judge_model", "lenient-model")
	form.Set("judge_more", "strict: strict-model")
	form.Set("panel", "median")
	if _, doc := f.postForm("/runs/estimate", form); text(doc, "#judge-calls") != "6" {
		t.Errorf("two judges over 3 answers: %q judge calls", text(doc, "#judge-calls"))
	}
	bad := f.runForm(ds, form["condition"])
	bad.Set("judge_more", "strict: strict model")
	if resp, doc := f.postForm("/runs", bad); resp.StatusCode != 422 || !strings.Contains(text(doc, "#form-error"), "More judges, line 1") {
		t.Errorf("a bad judge line: %d %q", resp.StatusCode, text(doc, "#form-error"))
	}
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)
	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if got := text(doc, "#judge-panel"); !strings.Contains(got, "strict") || !strings.Contains(got, "the median of the panel") {
		t.Errorf("the panel in the facts: %q", got)
	}
	if n := doc.Find("#judge-panel-table tbody tr").Length(); n != 3 {
		t.Errorf("%d rows in the panel table, want 3 metrics", n)
	}
	_, doc = f.get("/runs/new")
	if got := doc.Find("#judge_more").Text(); got != "strict: strict-model" || doc.Find("#panel option[selected]").AttrOr("value", "") != "median" {
		t.Errorf("the next form's panel: %q", got)
	}
}
