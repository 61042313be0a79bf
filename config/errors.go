package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// FieldError is one problem with one key of a config file, printed as
// "run.yaml:14: execution.num_repetiton: unknown key (did you mean num_repetitions?)".
// Parse returns every FieldError it found joined with errors.Join; use
// errors.As to reach them one by one.
type FieldError struct {
	File string // as given to Parse
	Line int    // 1-based; 0 when the key is missing and has no parent in the file
	Key  string // full key path, e.g. conditions.baseline.mcp_servers[1]
	Err  error
}

// Error implements error.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// joinSorted joins errs in the order of their lines, errors without a line
// last, so the message reads like the file.
func joinSorted(errs []error) error {
	line := func(err error) int {
		var fe *FieldError
		if errors.As(err, &fe) && fe.Line > 0 {
			return fe.Line
		}
		return int(^uint(0) >> 1)
	}
	slices.SortStableFunc(errs, func(a, b error) int { return cmp.Compare(line(a), line(b)) })
	return errors.Join(errs...)
}

// suggest returns " (did you mean X?)" for the known key closest to key, or
// "" when none is close enough to be a likely typo.
func suggest(key string, known []string) string {
	best, bestDist := "", len(key)/3+2
	for _, k := range known {
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
