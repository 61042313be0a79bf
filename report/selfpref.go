package report

import (
	"math"
	"slices"

	"assay/config"
	"assay/stats"
	"assay/store"
	"assay/tally"
)

// SelfPreference is how much more a panel judge favours the answers of its
// own family's model than the panel's other judges do, against how it
// treats the other models' answers: per answer, the judge's score less the
// other judges' mean (d), then per sample the mean d of its family's
// answers less the mean d of the other models' answers; the mean over
// samples, in the metrics' units, with a 95% interval over samples. A
// judge with no preference shows about 0.
type SelfPreference struct {
	Judge   string     `json:"judge"`
	Family  string     `json:"family"`
	Delta   float64    `json:"delta"`
	CI95    [2]float64 `json:"ci95"`
	Samples int        `json:"samples"`
	// OtherJudges is how many judges it is measured against: against one,
	// either judge's preference shows in both.
	OtherJudges int `json:"other_judges"`
}

// SelfPreferenceOf measures it for the panel judge at place judge, of
// family; false without two judges, answers of a model of that family and
// of another model to the same samples.
func (r *Report) SelfPreferenceOf(judge int, family string) (SelfPreference, bool) {
	panel := r.Config.Panel()
	out := SelfPreference{Family: family, OtherJudges: len(panel) - 1}
	if judge < 0 || judge >= len(panel) || len(panel) < 2 {
		return out, false
	}
	out.Judge = panel[judge].Name
	if out.Judge == "" {
		out.Judge = panel[judge].Model
	}
	own, other := r.judgeLeanings(judge, family)
	var groups [][]float64
	for row, o := range own {
		if x := other[row]; len(x) > 0 {
			a, _ := stats.Describe(o)
			b, _ := stats.Describe(x)
			groups = append(groups, []float64{a - b})
		}
	}
	if len(groups) == 0 {
		return out, false
	}
	s := stats.Clustered(groups)
	out.Delta, out.CI95, out.Samples = s.Mean, [2]float64{s.CILo, s.CIHi}, s.Samples
	return out, true
}

// judgeLeanings is, by sample, how far the judge's scores stand from the
// other judges' (each repetition apart), over the answers of the family's
// models (own) and of the others (other).
func (r *Report) judgeLeanings(judge int, family string) (own, other map[int64][]float64) {
	own, other = map[int64][]float64{}, map[int64][]float64{}
	if r.raw == nil {
		return own, other
	}
	models := agentModels(r.Config)
	for mi := range r.Metrics {
		for ci, cond := range r.Conditions {
			model := models[r.Run.Conditions[ci].Model]
			if model == "" {
				continue
			}
			into := other
			if Family(model) == family {
				into = own
			}
			for _, g := range r.raw[mi][cond] {
				addLeanings(into, g, judge)
			}
		}
	}
	return own, other
}

// addLeanings adds the judge's distance from the others in each of the
// sample's repetitions.
func addLeanings(into map[int64][]float64, g SampleScores, judge int) {
	values, start := g.Values(), 0
	for i := 1; i <= len(values); i++ {
		if i < len(values) && g.rep(i) == g.rep(i-1) {
			continue
		}
		if d, ok := judgeLessOthers(g, start, i, judge); ok {
			into[g.SampleRow] = append(into[g.SampleRow], d)
		}
		start = i
	}
}

// judgeLessOthers is, for one answer's scores [from, to) of g, the judge's
// mean score less the other judges' mean; false when either gave none.
func judgeLessOthers(g SampleScores, from, to, judge int) (float64, bool) {
	values := g.Values()
	var mine, others []float64
	for i := from; i < to; i++ {
		if int(g.judge(i)) == judge {
			mine = append(mine, values[i])
		} else {
			others = append(others, values[i])
		}
	}
	if len(mine) == 0 || len(others) == 0 {
		return 0, false
	}
	a, _ := stats.Describe(mine)
	b, _ := stats.Describe(others)
	return a - b, true
}

// SelfPreferenceByReviews is a judge's self-preference measured against
// people rather than the panel: over the answers reviewers scored, its mean
// error (its score less theirs) on its family's model's answers less its
// mean error on the other models' answers, with a 95% interval (Welch's,
// each mean's standard error over samples). It needs no panel: a run's one
// judge of an agent model's family is measured too.
type SelfPreferenceByReviews struct {
	Judge     string     `json:"judge"`
	Family    string     `json:"family"`
	Delta     float64    `json:"delta"`
	CI95      [2]float64 `json:"ci95"`
	Own, Rest int        `json:"-"` // reviewed answers of its family's model, and of the others
}

// selfPreferenceByReviews measures each judge flagged as of a model's
// family against the latest verdicts; none without reviewed answers of
// both its family's model and another.
func (r *Report) selfPreferenceByReviews(scores []tally.MetricScores, last map[int64]store.Review) []SelfPreferenceByReviews {
	if len(last) == 0 {
		return nil
	}
	flagged := r.FlaggedJudges()
	if len(flagged) == 0 {
		return nil
	}
	models := agentModels(r.Config)
	familyOf := map[string]string{} // condition → its model's family
	for _, c := range r.Run.Conditions {
		model := models[c.Model]
		if model == "" {
			model = r.Config.Agent.Model
		}
		familyOf[c.Name] = Family(model)
	}
	var out []SelfPreferenceByReviews
	panel := r.Config.Panel()
	for _, f := range flagged {
		own, rest := map[int64][]float64{}, map[int64][]float64{}
		for k := range scores {
			ms := &scores[k]
			into := rest
			if familyOf[ms.Condition] == f.Family {
				into = own
			}
			for _, a := range reviewedAnswers(ms, last) {
				if f.Place < len(a.scores) && !math.IsNaN(a.scores[f.Place]) {
					into[a.sample] = append(into[a.sample], a.scores[f.Place]-a.human)
				}
			}
		}
		if len(own) == 0 || len(rest) == 0 {
			continue
		}
		a, b := clustered(own), clustered(rest)
		name := panel[f.Place].Name
		if name == "" {
			name = panel[f.Place].Model
		}
		p := SelfPreferenceByReviews{Judge: name, Family: f.Family, Delta: a.Mean - b.Mean, Own: a.N, Rest: b.N}
		half := stats.TQuantileNu(0.975, stats.WelchDF(a.Stderr, a.Samples, b.Stderr, b.Samples)) * math.Hypot(a.Stderr, b.Stderr)
		p.CI95 = [2]float64{p.Delta - half, p.Delta + half}
		out = append(out, p)
	}
	return out
}

// clustered summarises values grouped by sample.
func clustered(by map[int64][]float64) stats.Summary {
	rows := make([]int64, 0, len(by))
	for row := range by {
		rows = append(rows, row)
	}
	slices.Sort(rows)
	groups := make([][]float64, 0, len(rows))
	for _, row := range rows {
		groups = append(groups, by[row])
	}
	return stats.Clustered(groups)
}

// agentModels maps a run's model names to their models.
func agentModels(cfg *config.Config) map[string]string {
	models := map[string]string{}
	for _, m := range cfg.Agent.Models {
		name := m.Name
		if name == "" {
			name = m.Model
		}
		models[name] = m.Model
	}
	return models
}

// FlaggedJudge is a panel judge of the family of an agent model it judges.
type FlaggedJudge struct {
	Place  int // in the panel
	Family string
}

// FlaggedJudges are the judges SameFamilies flags, by panel place, each once.
func (r *Report) FlaggedJudges() []FlaggedJudge {
	var out []FlaggedJudge
	seen := map[int]bool{}
	for _, f := range SameFamilies(r.Config) {
		for i, j := range r.Config.Panel() {
			_, model, err := j.Resolve()
			if !seen[i] && (err == nil && model == f.Judge || j.Model == f.Judge) {
				seen[i] = true
				out = append(out, FlaggedJudge{Place: i, Family: f.Family})
			}
		}
	}
	return out
}
