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
	models, bases := RunModels(r.Run), RunBases(r.Run)
	if len(models) < 2 {
		return nil, 0, assay.Errorf(assay.EINVALID, "Run %d is not over several models: routing needs a run over two models or more (agent.models).", r.Run.ID)
	}
	if base == "" {
		base = bases[0]
	}
	if !slices.Contains(bases, base) {
		return nil, 0, assay.Errorf(assay.EINVALID, "Run %d has no condition %q (it has %v).", r.Run.ID, base, bases)
	}
	conds := map[string]int{} // the run's condition → the model's place
	for _, c := range r.Run.Conditions {
		if c.Base == base {
			conds[c.Name] = slices.Index(models, c.Model)
		}
	}
	k := len(models)
	quality := map[int64][]float64{}
	counted := map[int64][]int{}
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
	type sums struct{ cost, latency, n []float64 }
	spent := map[int64]*sums{}
	answers, err := db.AnswerCosts(ctx, r.Run.ID)
	if err != nil {
		return nil, 0, err
	}
	for _, res := range answers {
		a, ok := conds[res.Condition]
		if !ok {
			continue
		}
		s := spent[res.SampleRow]
		if s == nil {
			s = &sums{make([]float64, k), make([]float64, k), make([]float64, k)}
			spent[res.SampleRow] = s
		}
		s.cost[a] += res.CostUSD
		s.latency[a] += float64(res.LatencyMS)
		s.n[a]++
	}
	m = &route.Matrix{Models: models}
	metrics := len(r.Metrics)
	var readErr error
	for smp := range db.AllSamples(ctx, r.Dataset.ID, &readErr) { // one at a time: a dataset may be large
		q, s := quality[smp.ID], spent[smp.ID]
		whole := q != nil && s != nil
		for a := 0; whole && a < k; a++ {
			whole = counted[smp.ID][a] == metrics && s.n[a] > 0
		}
		if !whole {
			if q != nil || s != nil {
				left++
			}
			continue
		}
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
	if readErr != nil {
		return nil, 0, readErr
	}
	if len(m.Quality) == 0 {
		return nil, left, assay.Errorf(assay.EINVALID, "No sample of run %d was answered by every model under %s.", r.Run.ID, base)
	}
	return m, left, nil
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
