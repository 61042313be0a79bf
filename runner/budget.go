package runner

import "context"

// budgetState keeps a run within its budget while tasks are in flight: a
// task starts only with its expected cost reserved, so what is in flight
// cannot take the run past the budget by more than about one task's cost.
type budgetState struct {
	reserved float64       // expected cost of the tasks in flight
	guess    float64       // a task's expected cost before any has finished: the estimate's share
	tasks    int           // tasks finished in this execution
	spentOn  float64       // and what they cost
	finished chan struct{} // a task finished: its reservation is free
}

// expected is what the next task is expected to cost: the mean of the
// tasks finished so far, or the estimate before any has.
func (w *workers) expected() float64 {
	if w.tasks > 0 {
		return w.spentOn / float64(w.tasks)
	}
	return w.guess
}

// reserve waits until the next task may start within budget (0: none) and
// reserves its expected cost. It is false when the budget is spent, or ctx
// is done. With nothing in flight a task always starts while money is left:
// the run passes its budget by at most that task. A run with a budget
// starts with one task; the others follow once its cost is known.
func (w *workers) reserve(ctx context.Context, budget float64) (float64, bool) {
	if budget <= 0 {
		return 0, true
	}
	for {
		w.mu.Lock()
		if w.cost >= budget {
			w.mu.Unlock()
			return 0, false
		}
		// Until a task has finished, its cost is a guess from the prompts'
		// length: one task at a time measures it first.
		e := w.expected()
		if w.reserved == 0 || w.tasks > 0 && w.cost+w.reserved+e <= budget {
			w.reserved += e
			w.mu.Unlock()
			return e, true
		}
		w.mu.Unlock()
		select {
		case <-w.finished:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// release frees a finished task's reservation.
func (w *workers) release(reserved float64) {
	w.mu.Lock()
	w.reserved -= reserved
	if w.reserved < 1e-12 {
		w.reserved = 0
	}
	w.mu.Unlock()
	select {
	case w.finished <- struct{}{}:
	default:
	}
}
