package runner

import (
	"hash/fnv"
	"math"
	"strconv"

	"assay"
	"assay/store"
)

// task is one (sample, condition, repetition) of a run.
type task struct {
	at         int           // the sample's place in the dataset's order
	row        int64         // the sample's row
	sample     *store.Sample // read as the task is handed to a worker
	condition  *assay.Condition
	repetition int
}

func (t task) key() store.TaskKey {
	return store.TaskKey{SampleRow: t.row, Condition: t.condition.Name, Repetition: t.repetition}
}

// plan lists the tasks not yet done, interleaved so that a partial run is
// balanced: repetition by repetition, sample by sample, every condition in turn.
func plan(samples []store.SampleRef, conditions []assay.Condition, repetitions int, done map[store.TaskKey]bool) []task {
	var out []task
	for rep := 1; rep <= repetitions; rep++ {
		for i := range samples {
			for j := range conditions {
				t := task{at: i, row: samples[i].ID, condition: &conditions[j], repetition: rep}
				if !done[t.key()] {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// planInOrder lists the tasks not yet done of a run with a stopping rule,
// or one shared by several servers: sample by sample in order (their places
// in samples), each whole — every repetition under every condition — before
// the next.
func planInOrder(samples []store.SampleRef, order []int, conditions []assay.Condition, repetitions int, done map[store.TaskKey]bool) []task {
	var out []task
	for _, i := range order {
		for rep := 1; rep <= repetitions; rep++ {
			for j := range conditions {
				t := task{at: i, row: samples[i].ID, condition: &conditions[j], repetition: rep}
				if !done[t.key()] {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// fileOrder is the places of n samples in the dataset's order.
func fileOrder(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// judged reports whether a result is in the judge sample. The choice hashes the
// task, so a resumed run makes the same choice.
func judged(rate float64, k store.TaskKey, sampleID string) bool {
	if rate >= 1 {
		return true
	}
	if rate <= 0 {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte(sampleID + "\x00" + k.Condition + "\x00" + strconv.Itoa(k.Repetition)))
	return float64(h.Sum64())/math.MaxUint64 < rate
}
