package readmodel

import (
	"fmt"
	"strings"

	"assay/store"
	"assay/templates"
)

// BatchesLine says how the batches a run's calls went in stand, and how
// many answers wait for their judgement: "Calls in batches: 3 batches
// sent (2,400 lines): 1 in progress, 2 done; 800 answers wait for their
// judgement."
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
	lines, done, going := 0, 0, 0
	for _, b := range batches {
		lines += b.Lines
		if b.Ended {
			done++
		} else {
			going++
		}
	}
	var parts []string
	if going > 0 {
		parts = append(parts, fmt.Sprintf("%d in progress", going))
	}
	if done > 0 {
		parts = append(parts, fmt.Sprintf("%d done", done))
	}
	return fmt.Sprintf("Calls in batches: %s sent (%s): %s%s.", templates.Count(len(batches), "batch"),
		templates.Count(lines, "line"), strings.Join(parts, ", "), wait)
}
