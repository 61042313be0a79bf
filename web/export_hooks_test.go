package web

import "assay/readmodel"

// SetRunsPage sets how many runs a list of every run reads at a time, for
// a test, and returns what puts it back.
func SetRunsPage(n int) (restore func()) {
	old := runsPage
	runsPage = n
	return func() { runsPage = old }
}

// SetTranscriptBudget sets the bytes an exported file's transcripts may
// take, for a test, and returns what puts it back.
func SetTranscriptBudget(n int) (restore func()) {
	old := readmodel.TranscriptBudget
	readmodel.TranscriptBudget = n
	return func() { readmodel.TranscriptBudget = old }
}

// WaitWarming waits for the samples tables s is making ahead of a request
// (warmSamples): a benchmark's fresh server would otherwise take the
// machine's cores from the next one's first request.
func WaitWarming(s *Server) { s.model.Settle() }

// SetDiskFree sets what the server reads as the room left on the
// database's disk, for a test, and returns what puts it back.
func SetDiskFree(free uint64) (restore func()) {
	old := diskFree
	diskFree = func(string) (uint64, error) { return free, nil }
	return func() { diskFree = old }
}
