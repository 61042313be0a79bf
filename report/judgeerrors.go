package report

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"assay/store"
	"assay/tally"
)

// JudgeErrors is where a panel's judges err against people on one metric,
// over the answers reviewers scored: each judge's mean error (signed and
// absolute), how their errors go together, and whether the panel's mean
// errs less than its best judge — which it does only when their errors are
// not correlated: judges that err together gain nothing from averaging.
type JudgeErrors struct {
	Metric    Metric   `json:"-"`
	Evaluator string   `json:"evaluator"`
	Name      string   `json:"name"`
	Judges    []string `json:"judges"`
	// N counts the reviewed answers every judge scored: the figures are over them.
	N            int       `json:"n"`
	MeanError    []float64 `json:"mean_error"`     // judge − person, per judge
	MeanAbsError []float64 `json:"mean_abs_error"` // per judge
	// Matrix is the Pearson correlation of the judges' errors across the
	// answers; nil where a judge's errors do not vary.
	Matrix [][]*float64 `json:"matrix"`
	// PanelAbsError is the mean absolute error of the judges' mean; the
	// best judge is the one with the least mean absolute error.
	PanelAbsError float64 `json:"panel_mean_abs_error"`
	BestJudge     string  `json:"best_judge"`
	BestAbsError  float64 `json:"best_mean_abs_error"`
	PanelBetter   bool    `json:"panel_better"`
	// MeanCorrelation is the mean of the correlations of two judges'
	// errors, over the pairs where it is defined; EffectiveJudges is how
	// many independent judges the panel is worth, n / (1 + (n − 1) r̄)
	// with r̄ taken as 0 below it: two judges that err alike count as one.
	MeanCorrelation *float64 `json:"mean_error_correlation"`
	EffectiveJudges float64  `json:"effective_judges"`
}

// effectiveJudges sets the panel's mean error correlation and how many
// independent judges it is worth.
func (e *JudgeErrors) effectiveJudges() {
	k := len(e.Judges)
	e.EffectiveJudges = float64(k)
	var sum float64
	pairs := 0
	for j := range k {
		for i := j + 1; i < k; i++ {
			if r := e.Matrix[j][i]; r != nil {
				sum += *r
				pairs++
			}
		}
	}
	if pairs == 0 {
		return
	}
	mean := sum / float64(pairs)
	e.MeanCorrelation = &mean
	e.EffectiveJudges = float64(k) / (1 + float64(k-1)*max(mean, 0))
}

// minErrorAnswers is how many reviewed answers a metric needs before the
// judges' errors are compared.
const minErrorAnswers = 3

// judgeErrors computes JudgeErrors for each panel metric from the scores as
// judged and each reviewed score's latest verdict.
func (r *Report) judgeErrors(scores []tally.MetricScores, last map[int64]store.Review) []JudgeErrors {
	if len(last) == 0 {
		return nil
	}
	var out []JudgeErrors
	for _, m := range r.Metrics {
		var judges []string
		var answers []panelAnswer
		for _, ms := range scores {
			if ms.Evaluator != m.Evaluator || ms.Metric != m.Name {
				continue
			}
			if len(ms.JudgeNames) > len(judges) {
				judges = ms.JudgeNames
			}
			answers = append(answers, reviewedAnswers(&ms, last)...)
		}
		if len(judges) < 2 || judges[0] == "" {
			continue
		}
		if e, ok := judgeErrorsOf(m, judges, answers); ok {
			out = append(out, e)
		}
	}
	return out
}

// panelAnswer is one reviewed answer: each judge's score (the mean of its
// repetitions; NaN when it gave none) and the person's.
type panelAnswer struct {
	sample int64 // its sample's row
	scores []float64
	human  float64
}

// reviewedAnswers are the answers of ms a reviewer scored, the latest
// verdict on any of an answer's scores giving the person's value.
func reviewedAnswers(ms *tally.MetricScores, last map[int64]store.Review) []panelAnswer {
	var out []panelAnswer
	for k := range ms.Samples {
		type answer struct {
			sum    []float64
			n      []int
			human  store.Review
			judged bool
		}
		byRep := map[int32]*answer{}
		var reps []int32
		for i := ms.Starts[k]; i < ms.Starts[k+1]; i++ {
			a := byRep[ms.Reps[i]]
			if a == nil {
				a = &answer{sum: make([]float64, len(ms.JudgeNames)), n: make([]int, len(ms.JudgeNames))}
				byRep[ms.Reps[i]] = a
				reps = append(reps, ms.Reps[i])
			}
			j := ms.Judges[i]
			a.sum[j] += ms.Values[i]
			a.n[j]++
			if v, ok := last[ms.IDs[i]]; ok && (!a.judged || v.At.After(a.human.At)) {
				a.human, a.judged = v, true
			}
		}
		for _, rep := range reps {
			a := byRep[rep]
			if !a.judged {
				continue
			}
			p := panelAnswer{sample: ms.Samples[k], scores: make([]float64, len(a.sum)), human: a.human.Value}
			for j := range a.sum {
				p.scores[j] = math.NaN()
				if a.n[j] > 0 {
					p.scores[j] = a.sum[j] / float64(a.n[j])
				}
			}
			out = append(out, p)
		}
	}
	return out
}

// judgeErrorsOf compares each judge with people over the answers every
// judge scored; false with fewer than minErrorAnswers of them.
func judgeErrorsOf(m Metric, judges []string, answers []panelAnswer) (JudgeErrors, bool) {
	k := len(judges)
	errs := make([][]float64, k)
	var panel []float64
	for _, a := range answers {
		if slices.ContainsFunc(a.scores, math.IsNaN) {
			continue
		}
		var mean float64
		for j, s := range a.scores {
			errs[j] = append(errs[j], s-a.human)
			mean += s / float64(k)
		}
		panel = append(panel, math.Abs(mean-a.human))
	}
	n := len(panel)
	if n < minErrorAnswers {
		return JudgeErrors{}, false
	}
	e := JudgeErrors{Metric: m, Evaluator: m.Evaluator, Name: m.Name, Judges: judges, N: n,
		MeanError: make([]float64, k), MeanAbsError: make([]float64, k), Matrix: make([][]*float64, k)}
	for j := range k {
		var abs float64
		for _, d := range errs[j] {
			abs += math.Abs(d)
		}
		e.MeanError[j] = stat.Mean(errs[j], nil)
		e.MeanAbsError[j] = abs / float64(n)
		e.Matrix[j] = make([]*float64, k)
		for i := range k {
			if r := stat.Correlation(errs[j], errs[i], nil); !math.IsNaN(r) {
				e.Matrix[j][i] = &r
			}
		}
		if j == 0 || e.MeanAbsError[j] < e.BestAbsError {
			e.BestJudge, e.BestAbsError = judges[j], e.MeanAbsError[j]
		}
	}
	e.PanelAbsError = stat.Mean(panel, nil)
	e.PanelBetter = e.PanelAbsError < e.BestAbsError-1e-12
	e.effectiveJudges()
	return e, true
}
