package web

// SetTranscriptBudget sets the bytes an exported file's transcripts may
// take, for a test, and returns what puts it back.
func SetTranscriptBudget(n int) (restore func()) {
	old := transcriptBudget
	transcriptBudget = n
	return func() { transcriptBudget = old }
}
