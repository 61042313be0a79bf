package templates

// ServerForm is one MCP server in the condition form, with list fields as text.
type ServerForm struct {
	Name      string
	Transport string
	Command   string
	Args      string // one argument per line
	Env       string // KEY=VALUE per line
	URL       string
	Headers   string // Name: value per line
}

// ConditionForm is the state of the condition form.
type ConditionForm struct {
	ID                    int64 // 0 for a new condition
	Name                  string
	SystemPrompt          string
	RequireMCPToolUse     bool
	RequireMCPToolSuccess bool
	Servers               []ServerForm
	Error                 string
}

// ConditionRow is one condition in the list.
type ConditionRow struct {
	ID                    int64
	Name                  string
	SystemPrompt          string
	Servers               []string // "name (transport)"
	RequireMCPToolUse     bool
	RequireMCPToolSuccess bool
	UpdatedAt             string
}

// ConditionsView is the list of conditions.
type ConditionsView struct {
	Page       Page
	Conditions []ConditionRow
}

// ConditionFormView is the create or edit page of a condition.
type ConditionFormView struct {
	Page Page
	Form ConditionForm
}
