// Package text holds the small string helpers the pages, the CLI and the
// engine share.
package text

import "strings"

// Clip puts s on one line and cuts it to at most n characters, marking the cut with "…".
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}
