package templates

// RubricRow is one saved rubric in the list.
type RubricRow struct {
	Name             string
	Metrics          []string // "name (scale)"
	UnverifiedClaims bool
	Problem          string // why its source no longer reads, if it does not
	UpdatedAt        string
	UpdatedBy        string
}

// RubricsView is the list of saved rubrics.
type RubricsView struct {
	Page    Page
	Rubrics []RubricRow
}

// RubricForm is the state of the rubric form.
type RubricForm struct {
	New    bool // a rubric not saved yet: its name can be typed
	Name   string
	Source string // YAML, as a run file writes it under rubrics.NAME
	Prompt string // what the judge is told, when the source reads
	Error  string
}

// RubricFormView is the create or edit page of a rubric.
type RubricFormView struct {
	Page Page
	Form RubricForm
}
