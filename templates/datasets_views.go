package templates

import "time"

// DatasetRow is one dataset as pages show it.
type DatasetRow struct {
	ID          int64
	Name        string
	Kind        string
	SHA256      string
	Format      string
	Filename    string
	Size        int64
	QuestionKey string
	AnswerKey   string
	Samples     int
	CreatedAt   time.Time
	Imported    bool // rebuilt from imported EEE result files
}

// UploadForm is the state of the upload form, kept when an upload fails.
type UploadForm struct {
	Name        string
	Kind        string
	QuestionKey string
	AnswerKey   string
	Error       string
	MaxMiB      int64
}

// DatasetsView is the dataset list with the upload form.
type DatasetsView struct {
	Page     Page
	Datasets []DatasetRow
	Form     UploadForm
	Kinds    []string
}

// SampleRow is one sample on the dataset page.
type SampleRow struct {
	Ordinal    int
	SampleID   string
	Input      string
	Reference  string
	Choices    []string
	Test       string
	EntryPoint string
	Metadata   []string // "key: value", sorted by key
	// ReferenceHTML is the golden answer rendered from markdown and
	// sanitized, where a page renders it; "" shows Reference as text.
	ReferenceHTML string
}

// Pager is a page of a long list.
type Pager struct {
	Page, Pages, PerPage, Total int
	BaseURL                     string // the page number is appended
}

// DatasetView is one dataset and a page of its samples.
type DatasetView struct {
	Page      Page
	CanDelete bool // the user may delete it
	Runs      int  // the runs that use it, which deleting it would delete too
	Dataset   DatasetRow
	Samples   []SampleRow
	Pager     Pager
	// Boards rank the finished runs on the dataset by their headline
	// metric, one board per metric: every condition (and model) of each.
	Boards []Leaderboard
}

// Leaderboard is every finished run's condition on one metric, best first.
type Leaderboard struct {
	Metric string
	Rows   []LeaderRow // the best of them
	Total  int         // every condition of every run on the board
}

// LeaderRow is one condition of one run on a leaderboard.
type LeaderRow struct {
	RunID                 int64
	Run, Agent, Condition string
	Mean, CI, Created     string
	N                     int
}

// choiceText returns the text of the choice a letter names, or "".
func choiceText(choices []string, letter string) string {
	if len(letter) != 1 || letter[0] < 'A' || int(letter[0]-'A') >= len(choices) {
		return ""
	}
	return choices[letter[0]-'A']
}
