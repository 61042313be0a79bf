package report

import (
	"context"

	"slices"

	"assay"
	"assay/route"
	"assay/store"
)

// Routing is a routing replay over a run's answers from every model: the
// JSON `assay route --json` prints.
type Routing struct {
	RunID     int64  `json:"run_id"`
	Condition string `json:"condition"` // the run file's condition the models answered under
	LeftOut   int    `json:"left_out"`  // samples some model did not answer, left out
	Features  string `json:"features"`  // the contextual algorithms' context: "local", or "embeddings"
	*route.Result
}

// RunModels lists a run's models by name, in its order; nil for a run of one model.
func RunModels(run *store.Run) []string {
	var out []string
	for _, c := range run.Conditions {
		if c.Model != "" && !slices.Contains(out, c.Model) {
			out = append(out, c.Model)
		}
	}
	return out
}

// RunBases lists the run file's conditions of a run over several models.
func RunBases(run *store.Run) []string {
	var out []string
	for _, c := range run.Conditions {
		if c.Base != "" && !slices.Contains(out, c.Base) {
			out = append(out, c.Base)
		}
	}
	return out
}

// Matrix is the answers of every model under one of the run file's
// conditions ("" for the first), as routing replays them: per sample, each
// model's quality (its metrics rescaled to 0–1 and averaged, over its
// repetitions), the agent's cost and latency averaged over its answers, and
// the sample's context features — from vectors, its question's embedding
// by sample row id, when given, else computed locally. A sample some model
// has no scored answer for is left out; left says how many.
func (r *Report) Matrix(ctx context.Context, db *store.DB, base string, vectors map[int64][]float32) (m *route.Matrix, left int, err error) {
	models, conds, err := r.modelsUnder(base)
	if err != nil {
		return nil, 0, err
	}
	quality, counted := r.qualityBySample(conds, len(models))
	spent, err := spentBySample(ctx, db, r.Run.ID, conds, len(models))
	if err != nil {
		return nil, 0, err
	}
	m = &route.Matrix{Models: models}
	metrics := len(r.Metrics)
	var readErr error
	for smp := range db.AllSamples(ctx, r.Dataset.ID, &readErr) { // one at a time: a dataset may be large
		q, s := quality[smp.ID], spent[smp.ID]
		if !answeredByAll(counted[smp.ID], s, metrics) {
			if q != nil || s != nil {
				left++
			}
			continue
		}
		addSample(m, smp, q, s, metrics, vectors)
	}
	if readErr != nil {
		return nil, 0, readErr
	}
	if len(m.Quality) == 0 {
		return nil, left, assay.Errorf(assay.EINVALID, "No sample of run %d was answered by every model under %s.", r.Run.ID, base)
	}
	return m, left, nil
}

// modelsUnder are the run's models and, under base (the run file's first
// condition when ""), each of its conditions' model's place.
func (r *Report) modelsUnder(base string) ([]string, map[string]int, error) {
	models, bases := RunModels(r.Run), RunBases(r.Run)
	if len(models) < 2 {
		return nil, nil, assay.Errorf(assay.EINVALID, "Run %d is not over several models: routing needs a run over two models or more (agent.models).", r.Run.ID)
	}
	if base == "" {
		base = bases[0]
	}
	if !slices.Contains(bases, base) {
		return nil, nil, assay.Errorf(assay.EINVALID, "Run %d has no condition %q (it has %v).", r.Run.ID, base, bases)
	}
	conds := map[string]int{} // the run's condition → the model's place
	for _, c := range r.Run.Conditions {
		if c.Base == base {
			conds[c.Name] = slices.Index(models, c.Model)
		}
	}
	return models, conds, nil
}

// qualityBySample sums, per sample and model, each metric's mean on a 0–1
// scale, and counts the metrics summed.
func (r *Report) qualityBySample(conds map[string]int, k int) (map[int64][]float64, map[int64][]int) {
	quality, counted := map[int64][]float64{}, map[int64][]int{}
	for i, metric := range r.Metrics {
		for name, a := range conds {
			for _, g := range r.Samples(i, name) {
				if quality[g.SampleRow] == nil {
					quality[g.SampleRow], counted[g.SampleRow] = make([]float64, k), make([]int, k)
				}
				quality[g.SampleRow][a] += metric.Scale.Unit(Mean(g.Values()))
				counted[g.SampleRow][a]++
			}
		}
	}
	return quality, counted
}

// spending is what a sample's answers cost and took, per model, and how many.
type spending struct{ cost, latency, n []float64 }

// spentBySample sums each sample's answers' cost and latency per model.
func spentBySample(ctx context.Context, db *store.DB, runID int64, conds map[string]int, k int) (map[int64]*spending, error) {
	answers, err := db.AnswerCosts(ctx, runID)
	if err != nil {
		return nil, err
	}
	spent := map[int64]*spending{}
	for _, res := range answers {
		a, ok := conds[res.Condition]
		if !ok {
			continue
		}
		s := spent[res.SampleRow]
		if s == nil {
			s = &spending{make([]float64, k), make([]float64, k), make([]float64, k)}
			spent[res.SampleRow] = s
		}
		s.cost[a] += res.CostUSD
		s.latency[a] += float64(res.LatencyMS)
		s.n[a]++
	}
	return spent, nil
}

// answeredByAll reports whether every model answered a sample and had its
// every metric scored.
func answeredByAll(counted []int, s *spending, metrics int) bool {
	if counted == nil || s == nil {
		return false
	}
	for a := range counted {
		if counted[a] != metrics || s.n[a] == 0 {
			return false
		}
	}
	return true
}

// addSample puts a sample answered by every model in m: its quality, cost
// and latency per model, and its features (its embedding's, when given).
func addSample(m *route.Matrix, smp *store.Sample, q []float64, s *spending, metrics int, vectors map[int64][]float32) {
	k := len(q)
	row, cost, lat := make([]float64, k), make([]float64, k), make([]float64, k)
	for a := range k {
		row[a] = q[a] / float64(metrics)
		cost[a], lat[a] = s.cost[a]/s.n[a], s.latency[a]/s.n[a]
	}
	m.Samples = append(m.Samples, smp.SampleID)
	m.Quality, m.Cost, m.Latency = append(m.Quality, row), append(m.Cost, cost), append(m.Latency, lat)
	if v, ok := vectors[smp.ID]; ok {
		m.Context = append(m.Context, route.EmbeddingFeatures(smp.Input, v))
	} else {
		m.Context = append(m.Context, route.Features(smp.Input, smp.Metadata))
	}
}

// Route replays the routing algorithms over the run's answers under base;
// vectors, when given, are the samples' embeddings (see Matrix).
func (r *Report) Route(ctx context.Context, db *store.DB, base string, opt route.Options, vectors map[int64][]float32) (*Routing, error) {
	m, left, err := r.Matrix(ctx, db, base, vectors)
	if err != nil {
		return nil, err
	}
	res, err := route.Replay(ctx, m, opt)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	} else if err != nil {
		return nil, assay.Errorf(assay.EINVALID, "%v", err)
	}
	if base == "" {
		base = RunBases(r.Run)[0]
	}
	features := "local"
	if vectors != nil {
		features = "embeddings"
	}
	return &Routing{RunID: r.Run.ID, Condition: base, LeftOut: left, Features: features, Result: res}, nil
}
