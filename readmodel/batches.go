package readmodel

import (
	"fmt"
	"strings"

	"assay/store"
	"assay/templates"
)

// BatchesLine says how the batches a run's judge calls went in stand:
// "Judge calls in batches: 3 sent (2,400 lines): 1 in progress, 2 done."
func BatchesLine(batches []store.RunBatch) string {
	if len(batches) == 0 {
		return "Judge calls in batches: none sent yet (calls are gathered before a batch is sent)."
	}
	lines, done, going := 0, 0, 0
	for _, b := range batches {
		lines += len(b.Lines)
		if b.EndedAt != nil {
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
	return fmt.Sprintf("Judge calls in batches: %s sent (%s): %s.", templates.Count(len(batches), "batch"),
		templates.Count(lines, "line"), strings.Join(parts, ", "))
}
