package runner

import (
	"context"
	"math"
	"sync"

	"assay"
	"assay/config"
	"assay/stop"
	"assay/store"
	"assay/tally"
)

// StoppedEarly begins the message of a run its stopping rule stopped.
const StoppedEarly = "Stopped early: "

// stopping is a run's stopping rule at work: its tracker, fed every result
// as it is saved, and which samples the run has taken.
type stopping struct {
	mu      sync.Mutex
	tracker *stop.Tracker
	order   []int         // the samples' places, in the order the run takes them
	place   map[int64]int // a sample row's place
}

// startStopping readies the run's stopping rule, with the results saved
// before; nil for a run without one, or one extended past its stop.
func (ex *execution) startStopping(ctx context.Context) (*stopping, error) {
	rule := ex.spec.Stop
	if rule == nil {
		return nil, nil
	}
	if st, err := ex.m.db.RunStopOf(ctx, ex.run.ID); err != nil {
		return nil, err
	} else if st != nil && st.Extended {
		return nil, nil
	}
	t, place, err := stop.Replay(ctx, ex.m.db, ex.run, ex.spec, ex.samples.refs)
	if err != nil {
		return nil, err
	}
	return &stopping{tracker: t, order: t.Order(), place: place}, nil
}

// add takes a saved result.
func (s *stopping) add(res *store.Result) {
	at, ok := s.place[res.SampleRow]
	if !ok {
		return
	}
	s.mu.Lock()
	s.tracker.Add(at, res.Condition, res)
	s.mu.Unlock()
}

// decided says whether the rule is met, how, and after how many whole
// samples.
func (s *stopping) decided() (bool, string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok, why := s.tracker.Decided()
	return ok, why, s.tracker.Samples()
}

// recordStop records that the rule stopped the run before its plan's end:
// how many samples it did, why, and what it did not spend — the answers
// not asked for, at the estimate's cost per task.
func (ex *execution) recordStop(ctx context.Context, f *feed) error {
	var err error
	e := EstimateEach(ex.spec, ex.dataset.Kind, ex.m.db.AllSamples(ctx, ex.dataset.ID, &err), ex.run.Conditions, ex.prices)
	if err != nil {
		return err
	}
	perTask := e.CostUSD / float64(max(ex.run.TotalTasks, 1))
	progress, err := tally.Of(ex.m.db).RunProgress(ctx, ex.run.ID)
	if err != nil {
		return err
	}
	done := 0
	for _, p := range progress {
		done += p.Done
	}
	perSample := max(len(ex.run.Conditions)*ex.run.Repetitions, 1)
	saved := max(ex.run.TotalTasks-done, 0)
	calls, err := ex.m.db.RunCalls(ctx, ex.run.ID)
	if err != nil {
		return err
	}
	st := store.RunStop{Samples: (done + perSample - 1) / perSample, DecidedAt: f.decidedAt, OfSamples: len(ex.samples.refs), Reason: f.stoppedWhy,
		SavedTasks: saved, SavedUSD: perTask * float64(saved)}
	if done > 0 {
		st.SavedCalls = int(math.Round(float64(calls) / float64(done) * float64(saved)))
	}
	ex.m.log.Info("run stopped early", "run_id", ex.run.ID, "samples", st.Samples, "of", st.OfSamples, "why", st.Reason)
	return ex.m.db.SaveRunStop(ctx, ex.run.ID, st)
}

// checkStop checks a run's stopping rule against what the run gives: the
// metric it watches, and for "decided" at least two conditions (or
// models) to decide between.
func checkStop(spec *config.Config, conditions int) error {
	if spec.Stop == nil {
		return nil
	}
	if _, err := spec.StopMetric(); err != nil {
		return assay.Errorf(assay.EINVALID, "%s", err)
	}
	if spec.Stop.When == config.StopDecided && conditions < 2 {
		return assay.Errorf(assay.EINVALID, "stop.when: %q compares conditions (or models), and this run has one: use %q with a half_width",
			config.StopDecided, config.StopPrecise)
	}
	return nil
}
