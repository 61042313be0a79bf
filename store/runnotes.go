package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"assay"
)

// The bounds of what people write on a run.
const (
	maxTags       = 20
	maxTagLength  = 40
	maxNoteLength = 4000
)

// SplitTags reads comma-separated tags: trimmed, lower-cased, without
// empties or repeats, in the order given.
func SplitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.ToLower(strings.Join(strings.Fields(t), " "))
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// SetRunNotes replaces a run's tags and note.
func (db *DB) SetRunNotes(ctx context.Context, runID int64, tags []string, note string) error {
	tags = SplitTags(strings.Join(tags, ","))
	if len(tags) > maxTags {
		return assay.Errorf(assay.EINVALID, "Tags: at most %d.", maxTags)
	}
	for _, t := range tags {
		if utf8.RuneCountInString(t) > maxTagLength {
			return assay.Errorf(assay.EINVALID, "Tags: %q is longer than %d characters.", t, maxTagLength)
		}
	}
	note = strings.TrimSpace(note)
	if utf8.RuneCountInString(note) > maxNoteLength {
		return assay.Errorf(assay.EINVALID, "Note: at most %d characters.", maxNoteLength)
	}
	res, err := db.write.ExecContext(ctx, `UPDATE runs SET tags = ?, note = ? WHERE id = ?`, strings.Join(tags, ", "), note, runID)
	if err != nil {
		return fmt.Errorf("run notes: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("run %d: %w", runID, assay.ErrNotFound)
	}
	return nil
}

// SetRunHeadline keeps a run's headline, if the run is still over: a run
// that went on since gets its own when it ends again.
func (db *DB) SetRunHeadline(ctx context.Context, runID int64, headline string) error {
	_, err := db.write.ExecContext(ctx, `UPDATE runs SET headline = ? WHERE id = ? AND status NOT IN (?, ?)`,
		headline, runID, RunPending, RunRunning)
	if err != nil {
		return fmt.Errorf("run headline: %w", err)
	}
	return nil
}
