package readmodel

import (
	"cmp"
	"fmt"
	"strings"

	"assay/store"
	"assay/templates"
)

// BatchesLine says how the batches a run's calls went in stand, as their
// provider says, and how many answers wait for their judgement: "Calls in
// batches: 3 batches sent (2,400 lines): 1 in progress at the provider, 2
// done; 800 answers wait for their judgement."
func BatchesLine(batches []store.BatchCount, waiting int) string {
	wait := ""
	switch {
	case waiting == 1:
		wait = "; 1 answer waits for its judgement"
	case waiting > 1:
		wait = fmt.Sprintf("; %s answers wait for their judgement", templates.Int(waiting))
	}
	if len(batches) == 0 {
		return "Calls in batches: none sent yet (calls are gathered before a batch is sent)" + wait + "."
	}
	lines, done := 0, 0
	going := map[string]int{} // by the provider's word for how it stands
	var order []string
	for _, b := range batches {
		lines += b.Lines
		if b.Ended {
			done++
			continue
		}
		state := strings.ReplaceAll(cmp.Or(b.Status, "sent"), "_", " ")
		if going[state] == 0 {
			order = append(order, state)
		}
		going[state]++
	}
	var parts []string
	for _, state := range order {
		parts = append(parts, fmt.Sprintf("%d %s at the provider", going[state], state))
	}
	if done > 0 {
		parts = append(parts, fmt.Sprintf("%d done", done))
	}
	return fmt.Sprintf("Calls in batches: %s sent (%s): %s%s.", templates.Count(len(batches), "batch"),
		templates.Count(lines, "line"), strings.Join(parts, ", "), wait)
}
