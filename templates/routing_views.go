package templates

// RoutingView is a run's Routing page.
type RoutingView struct {
	Page       Page
	Base       string // the report's URL: "/runs/7" or "/r/<token>"
	Static     bool   // a shared page: no form
	Form       RoutingForm
	Conditions []string // the run file's conditions
	Algorithms []string // to choose whose model share over time is drawn
	Models     []string
	Message    string // why there is no replay
	Pending    string // the replay is under way: what it does
	Refresh    string // the page's URL, which it fetches again while the replay is under way
	Condition  string
	Samples    int
	LeftOut    int
	Orders     int
	Rows       []RoutingRow // the algorithms
	Alone      []RoutingRow // each model sent every query
	Charts     []ChartView
}

// RoutingForm is the replay's settings, as typed.
type RoutingForm struct {
	Condition, Quality, Cost, Latency, Orders, Seed string
	ShareOf                                         string
	Error                                           string
}

// RoutingRow is one algorithm's figures, or one model's alone.
type RoutingRow struct {
	Name, Quality, QualityCI, Cost, Latency, Reward, RewardCI, Regret, Saved, Shares string
}
