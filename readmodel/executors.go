package readmodel

import (
	"fmt"
	"strings"

	"assay/store"
	"assay/templates"
)

// ExecutorsLine says on a run's live page which processes execute it and
// how far each got: "Executed by assay serve (pid 12 on a): 40 tasks done
// since it took the run; its lease holds until 15:04:05.", or "Executed
// by 2 servers together, …" naming each with its tasks; "" for none.
func ExecutorsLine(executors []store.Executor) string {
	switch len(executors) {
	case 0:
		return ""
	case 1:
		e := executors[0]
		return fmt.Sprintf("Executed by %s: %s done since it took the run; its lease holds until %s.",
			e.Node, templates.Count(e.TasksDone, "task"), e.LeaseUntil.Local().Format("15:04:05"))
	}
	parts := make([]string, len(executors))
	until := executors[0].LeaseUntil
	for i, e := range executors {
		parts[i] = fmt.Sprintf("%s, %s done since it joined", e.Node, templates.Count(e.TasksDone, "task"))
		if e.LeaseUntil.Before(until) {
			until = e.LeaseUntil
		}
	}
	return fmt.Sprintf("Executed by %d servers together, each claiming whole samples: %s. Their leases hold until %s at least.",
		len(executors), strings.Join(parts, "; "), until.Local().Format("15:04:05"))
}
