package readmodel_test

import (
	"strings"
	"testing"
	"time"

	"assay/readmodel"
	"assay/store"
)

// A run's live page names who executes it: one process with how far it
// got, or every server sharing it, each with its tasks.
func TestExecutorsLine(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.Local)
	one := []store.Executor{{Node: "assay serve (pid 12 on a)", TasksDone: 40, LeaseUntil: at}}
	if got, want := readmodel.ExecutorsLine(one), "Executed by assay serve (pid 12 on a): 40 tasks done since it took the run; its lease holds until 12:00:00."; got != want {
		t.Errorf("one executor:\n%s\nwant\n%s", got, want)
	}
	two := append(one, store.Executor{Node: "assay serve (pid 7 on b)", TasksDone: 1, LeaseUntil: at.Add(-time.Second)})
	got := readmodel.ExecutorsLine(two)
	for _, part := range []string{"Executed by 2 servers together", "assay serve (pid 12 on a), 40 tasks done since it joined",
		"assay serve (pid 7 on b), 1 task done since it joined", "until 11:59:59 at least"} {
		if !strings.Contains(got, part) {
			t.Errorf("two executors: %q lacks %q", got, part)
		}
	}
	if readmodel.ExecutorsLine(nil) != "" {
		t.Error("a run nobody executes has an executors line")
	}
}
