package runner

import (
	"context"
	"errors"
	"fmt"

	"assay"
	"assay/store"
)

// Interruption describes an unfinished run that no live process executes:
// the process that did stopped (it was killed, or its machine went down).
type Interruption struct {
	Last  *store.Lease // the process that executed it last; nil when unknown
	Unset []Unset      // what this process lacks to take it over; empty: it will
}

// Interrupted reports whether an unfinished run is executed by nobody, and
// if so who executed it last and whether this process can take it over.
func (m *Manager) Interrupted(ctx context.Context, run *store.Run) (*Interruption, error) {
	if run.Status.Finished() || m.Active(run.ID) || m.heldElsewhere(ctx, run.ID) {
		return nil, nil
	}
	in := &Interruption{}
	l, err := m.db.LastLease(ctx, run.ID)
	switch {
	case err == nil:
		in.Last = l
	case !errors.Is(err, assay.ErrNotFound):
		return nil, err
	}
	in.Unset = m.unsetFor(run)
	return in, nil
}

// variablesSet is an error naming the variables this process lacks to
// execute a stored run; nil when it has them all.
func (m *Manager) variablesSet(run *store.Run) error {
	if unset := m.unsetFor(run); len(unset) > 0 {
		return unsetError(unset)
	}
	return nil
}

// unsetFor lists what this process lacks to execute a stored run: nothing
// it can name when the run's config cannot be read (a list holds it
// without its config; executing it fails saying why).
func (m *Manager) unsetFor(run *store.Run) []Unset {
	if run.Config == nil {
		return nil
	}
	unset := m.UnsetVariables(run.Config, run.Config.Evaluators, run.Conditions)
	if run.RejudgedFrom != 0 {
		return judgesUnset(unset) // it calls no agent
	}
	return unset
}

// canTakeOver reports whether this process has what the run needs; when it
// has not, it says so in the log once per run.
func (m *Manager) canTakeOver(run *store.Run) bool {
	unset := m.unsetFor(run)
	if len(unset) == 0 {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.skipped == nil {
		m.skipped = map[int64]bool{}
	}
	if !m.skipped[run.ID] {
		m.skipped[run.ID] = true
		m.log.Warn("cannot take over run: its variables are not set here", "run_id", run.ID, "unset", names(unset))
	}
	return false
}

func names(list []Unset) []string {
	out := make([]string, len(list))
	for i, u := range list {
		out[i] = u.Name
	}
	return out
}

// Describe is how a page names the process that executed a run last.
func (in *Interruption) Describe() string {
	if in.Last == nil {
		return "The process executing this run stopped"
	}
	return fmt.Sprintf("%s (pid %d on %s), which executed this run, stopped", in.Last.Holder.Program, in.Last.Holder.PID, in.Last.Holder.Host)
}
