package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"assay"
	"assay/config"
	"assay/internal/outfile"
	"assay/report"
	"assay/report/gate"
	"assay/runner"
	"assay/runner/audit"
	"assay/store"
)

// ciFlags are assay run's flags for CI: gates, a baseline, and the files a
// CI job reads.
type ciFlags struct {
	gates           []gate.Gate
	baseline        int64
	baselineLatest  bool
	chose           string // which run --baseline-latest took, and why
	tolerance       float64
	gateRegressions bool
	junit           string
	summaryMD       string
	reportURL       string
	maxErrorRate    float64
	// auditGates are the gates on a judge audit ('audit.verbosity<=0.2'):
	// with any, the completed run's judge is audited (auditSamples answers).
	auditGates   []string
	auditSamples int

	baselineID int64 // the baseline chosen, 0 for none
	note       string
}

func (ci *ciFlags) register(fs *flag.FlagSet) {
	fs.Func("gate", "a gate the run must hold, repeatable: [CONDITION:]METRIC[@ci_low]>=NUMBER, e.g. 'rubric.completeness>=4.0'; one on a judge audit made after the run, e.g. 'audit.verbosity<=0.2'; or one on the judge against people's reviews: 'agreement.METRIC.kappa>=0.6', 'agreement.METRIC.mae<=0.5', '[CONDITION:]ppi.METRIC.shift<=0.2'", func(s string) error {
		if strings.HasPrefix(strings.TrimSpace(s), "audit.") {
			if _, err := parseAuditGate(s); err != nil {
				return err
			}
			ci.auditGates = append(ci.auditGates, s)
			return nil
		}
		g, err := gate.Parse(s)
		if err != nil {
			return err
		}
		ci.gates = append(ci.gates, g)
		return nil
	})
	fs.Int64Var(&ci.baseline, "baseline", 0, "compare with this run, paired by sample (same dataset bytes)")
	fs.BoolVar(&ci.baselineLatest, "baseline-latest", false, "compare with the latest completed run on the same dataset")
	fs.Float64Var(&ci.tolerance, "tolerance", 0, "a regression is a paired difference whose 95% CI lies below -tolerance")
	fs.BoolVar(&ci.gateRegressions, "gate-regressions", false, "fail the run (exit 1) when the baseline comparison finds a regression")
	fs.StringVar(&ci.junit, "junit", "", "write JUnit XML here: one test case per condition and gate")
	fs.StringVar(&ci.summaryMD, "summary-md", "", "write a markdown summary here (e.g. $GITHUB_STEP_SUMMARY)")
	fs.StringVar(&ci.reportURL, "report-url", "", "the server's base URL, for a link to /runs/ID in the summary ({run_id} is replaced when present)")
	fs.IntVar(&ci.auditSamples, "audit-samples", audit.DefaultSamples, "with an audit.* gate: answers the judge audit pads, and pairs it compares")
	fs.Float64Var(&ci.maxErrorRate, "max-error-rate", gate.DefaultMaxErrorRate, "exit 2 when more than this share of a condition's tasks failed (agent and judge errors counted), or when an evaluator has no score under a condition")
}

// check rejects flags that contradict each other.
func (ci *ciFlags) check() error {
	switch {
	case ci.baseline != 0 && ci.baselineLatest:
		return fmt.Errorf("run: give --baseline RUN_ID or --baseline-latest, not both")
	case ci.baseline < 0:
		return fmt.Errorf("run: --baseline %d: a run id is a positive number", ci.baseline)
	case ci.tolerance < 0 || math.IsNaN(ci.tolerance) || math.IsInf(ci.tolerance, 0):
		return fmt.Errorf("run: --tolerance must be a number ≥ 0")
	case !(ci.maxErrorRate >= 0 && ci.maxErrorRate <= 1):
		return fmt.Errorf("run: --max-error-rate must be between 0 and 1")
	case ci.gateRegressions && ci.baseline == 0 && !ci.baselineLatest:
		return fmt.Errorf("run: --gate-regressions needs --baseline RUN_ID or --baseline-latest")
	}
	for _, f := range []string{ci.junit, ci.summaryMD} {
		if f == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(f)); err != nil || !st.IsDir() {
			return fmt.Errorf("run: cannot write %s: no folder %s", f, filepath.Dir(f))
		}
	}
	return nil
}

// prepare checks the flags against a run being resumed.
func (ci *ciFlags) prepare(ctx context.Context, db *store.DB, id int64) error {
	run, err := db.Run(ctx, id)
	if err != nil {
		return err
	}
	r, err := report.Load(ctx, db, id)
	if err != nil {
		return err
	}
	if err := gate.Check(ci.gates, r.Config, r.Dataset.Kind, r.Conditions); err != nil {
		return err
	}
	if err := ci.checkAudit(r.Config); err != nil {
		return err
	}
	return ci.findBaseline(ctx, db, r.Dataset, conditionNames(run.Conditions), id)
}

// findBaseline picks the baseline run and checks it can be compared with
// a run of conditions on ds (run id, or 0 before it exists).
func (ci *ciFlags) findBaseline(ctx context.Context, db *store.DB, ds *store.Dataset, conditions []string, id int64) error {
	switch {
	case ci.baseline != 0:
		base, err := db.Run(ctx, ci.baseline)
		if err != nil {
			return fmt.Errorf("--baseline %d: %w", ci.baseline, err)
		}
		if base.Status != store.RunCompleted {
			return fmt.Errorf("--baseline %d: the run is %s, not completed", base.ID, base.Status)
		}
		if base.DatasetID != ds.ID {
			other, err := db.Dataset(ctx, base.DatasetID)
			if err != nil {
				return err
			}
			return fmt.Errorf("--baseline %d is on dataset %q (SHA-256 %.12s…), this run on %q (%.12s…): only runs of the same dataset bytes can be compared",
				base.ID, other.Name, other.SHA256, ds.Name, ds.SHA256)
		}
		if !sharesCondition(base.Conditions, conditions) {
			return fmt.Errorf("--baseline %d shares no condition with this run (it has %s)", base.ID, strings.Join(conditionNames(base.Conditions), ", "))
		}
		ci.baselineID = base.ID
	case ci.baselineLatest:
		return ci.latestBaseline(ctx, db, ds, conditions, id)
	}
	return nil
}

// latestBaseline picks, among the completed runs of ds made before run id,
// the latest that ran its whole plan (a run its stopping rule stopped did
// fewer samples) with this run's conditions, else with a condition of them;
// failing that the latest sharing a condition, and says which it took.
func (ci *ciFlags) latestBaseline(ctx context.Context, db *store.DB, ds *store.Dataset, conditions []string, id int64) error {
	ids, err := db.CompletedRuns(ctx, ds.ID)
	if err != nil {
		return err
	}
	const (
		sameWhole = iota // the same conditions, the whole plan
		someWhole        // a condition in common, the whole plan
		some             // a condition in common, stopped early
		none
	)
	best, bestRank := int64(0), none
	for _, b := range ids { // newest first
		if id != 0 && b >= id {
			continue
		}
		base, err := db.Run(ctx, b)
		if err != nil {
			return err
		}
		if !sharesCondition(base.Conditions, conditions) {
			continue
		}
		stopped, err := db.RunStopOf(ctx, b)
		if err != nil {
			return err
		}
		rank := some
		if stopped == nil || stopped.Extended {
			rank = someWhole
			if slices.Equal(sortedNames(base.Conditions), sortedCopy(conditions)) {
				rank = sameWhole
			}
		}
		if rank < bestRank {
			best, bestRank = b, rank
		}
		if rank == sameWhole {
			break
		}
	}
	ci.baselineID = best
	switch bestRank {
	case none:
		ci.note = fmt.Sprintf("no baseline: no earlier completed run on dataset %q shares a condition with this one", ds.Name)
	case sameWhole:
		ci.chose = fmt.Sprintf("baseline: run %d, the latest completed run of dataset %q with these conditions that ran its whole plan", best, ds.Name)
	case someWhole:
		ci.chose = fmt.Sprintf("baseline: run %d, the latest completed run of dataset %q that ran its whole plan; it shares only some of these conditions", best, ds.Name)
	default:
		ci.chose = fmt.Sprintf("baseline: run %d, the latest completed run of dataset %q sharing a condition; its stopping rule stopped it early, and no run that ran its whole plan shares one", best, ds.Name)
	}
	return nil
}

func sortedNames(cs []assay.Condition) []string { return sortedCopy(conditionNames(cs)) }

func sortedCopy(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

func sharesCondition(cs []assay.Condition, names []string) bool {
	return slices.ContainsFunc(cs, func(c assay.Condition) bool { return slices.Contains(names, c.Name) })
}

func conditionNames(cs []assay.Condition) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// ciOutcome is the gates' outcome and what assay run prints of it.
type ciOutcome struct {
	gate.Outcome
	note   string
	chose  string   // which run --baseline-latest took, and why
	health []string // what makes the completed run no result (gate.Health)
	// audit is the judge audit the audit.* gates asked for, and how each held.
	audit      *audit.Result
	auditGates []auditGateResult
}

// auditGateResult is how one audit.* gate held.
type auditGateResult struct {
	Gate    string `json:"gate"`
	Held    bool   `json:"held"`
	Message string `json:"message"`
	figure  string // verbosity, position or first_wins
}

// checkAudit refuses audit.* gates on a run without a judge.
func (ci *ciFlags) checkAudit(cfg *config.Config) error {
	if len(ci.auditGates) > 0 && !slices.ContainsFunc(cfg.Evaluators, config.Evaluator.UsesJudge) {
		return fmt.Errorf("run: --gate %s: the run has no judge to audit (its evaluators are deterministic)", ci.auditGates[0])
	}
	if ci.auditSamples < 1 {
		return fmt.Errorf("run: --audit-samples must be at least 1")
	}
	return nil
}

// judgeAudit audits the completed run's judge for the audit.* gates and
// checks them.
func (v *ciOutcome) judgeAudit(ctx context.Context, m *runner.Manager, ci *ciFlags) error {
	if len(ci.auditGates) == 0 {
		return nil
	}
	res, err := m.AuditAndKeep(ctx, v.Summary.RunID, audit.Options{Samples: ci.auditSamples})
	if err != nil {
		return fmt.Errorf("judge audit: %s", assay.ErrorMessage(err))
	}
	v.audit = res
	for _, s := range ci.auditGates {
		g, _ := parseAuditGate(s)
		held, why := g.holds(res)
		v.auditGates = append(v.auditGates, auditGateResult{Gate: strings.TrimSpace(s), Held: held, Message: why, figure: g.figure})
	}
	return nil
}

// Passed is whether every gate held, the audit's included.
func (v *ciOutcome) Passed() bool {
	for _, g := range v.auditGates {
		if !g.Held {
			return false
		}
	}
	return v.Outcome.Passed()
}

// outcome checks the finished run against the gates.
func (ci *ciFlags) outcome(ctx context.Context, db *store.DB, id int64) (*ciOutcome, error) {
	r, err := report.Load(ctx, db, id)
	if err != nil {
		return nil, err
	}
	v := &ciOutcome{Outcome: gate.Outcome{Summary: r.Summary, Gates: gate.Judge(ci.gates, r.Summary, r.Reviews),
		FailRegressions: ci.gateRegressions, ReportURL: ci.url(id)}, note: ci.note, chose: ci.chose, health: gate.Health(r, ci.maxErrorRate)}
	if ci.baselineID != 0 {
		base, err := report.Load(ctx, db, ci.baselineID)
		if err != nil {
			return nil, err
		}
		if v.Baseline, err = gate.Compare(base, r, ci.tolerance); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (ci *ciFlags) url(id int64) string {
	u := ci.reportURL
	switch {
	case u == "":
		return ""
	case strings.Contains(u, "{run_id}"):
		return strings.ReplaceAll(u, "{run_id}", strconv.FormatInt(id, 10))
	}
	return strings.TrimRight(u, "/") + "/runs/" + strconv.FormatInt(id, 10)
}

// write writes the JUnit XML and markdown files asked for.
func (ci *ciFlags) write(v *ciOutcome) error {
	for _, f := range []struct {
		path  string
		write func(io.Writer) error
	}{{ci.junit, v.WriteJUnit}, {ci.summaryMD, v.WriteMarkdown}} {
		if f.path == "" {
			continue
		}
		if err := writeFile(f.path, f.write); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes a file through fn (see outfile), reporting the first error.
func writeFile(path string, fn func(io.Writer) error) error {
	if err := outfile.Write(path, fn); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// runOutput is what assay run --json prints: the summary's keys, plus the
// gates and the baseline comparison when asked for.
type runOutput struct {
	*report.Summary
	Passed   *bool            `json:"passed,omitempty"`
	Gates    []gate.Result    `json:"gates,omitempty"`
	Baseline *gate.Comparison `json:"baseline,omitempty"`
	Note     string           `json:"note,omitempty"`
	// BaselineChosen says which run --baseline-latest took, and why.
	BaselineChosen string `json:"baseline_chosen,omitempty"`
	// Audit is the judge audit the audit.* gates asked for; AuditGates how
	// each held.
	Audit      *audit.Result     `json:"audit,omitempty"`
	AuditGates []auditGateResult `json:"audit_gates,omitempty"`
	// Unhealthy says what makes a completed run no result: an evaluator
	// without a score, errors over --max-error-rate (exit 2).
	Unhealthy []string `json:"unhealthy,omitempty"`
}

func (v *ciOutcome) output() runOutput {
	out := runOutput{Summary: v.Summary.Grouped(), Gates: v.Gates, Baseline: v.Baseline, Note: v.note, BaselineChosen: v.chose, Unhealthy: v.health,
		Audit: v.audit, AuditGates: v.auditGates}
	if len(v.Gates) > 0 || v.Baseline != nil || len(v.auditGates) > 0 {
		p := v.Passed()
		out.Passed = &p
	}
	return out
}

// failures says which gates failed and which regressions failed the run.
func (v *ciOutcome) failures() string {
	var out []string
	for _, g := range v.Gates {
		if !g.Held {
			out = append(out, "gate "+g.Gate+" failed under "+g.Condition)
		}
	}
	for _, g := range v.auditGates {
		if !g.Held {
			out = append(out, "gate "+g.Gate+" failed: "+g.Message)
		}
	}
	if v.FailRegressions && v.Baseline != nil {
		for _, d := range v.Baseline.Regressed() {
			out = append(out, fmt.Sprintf("%s regressed under %s against run %d", d.Metric, d.Condition, v.Baseline.BaselineRunID))
		}
	}
	return strings.Join(out, "; ")
}

// printOutcome writes the gates and the baseline comparison after the summary.
func printOutcome(w io.Writer, v *ciOutcome) {
	if v.note != "" {
		fmt.Fprintln(w, v.note)
	}
	if len(v.health) > 0 {
		fmt.Fprintln(w, "\nnot a result to act on:")
		for _, h := range v.health {
			fmt.Fprintf(w, "  %s\n", h)
		}
	}
	if len(v.Gates) > 0 {
		fmt.Fprintln(w, "\ngates:")
		for _, g := range v.Gates {
			fmt.Fprintf(w, "  %s  %s  %s\n", okWord(g.Held), g.Gate, g.Message)
		}
	}
	if v.audit != nil {
		fmt.Fprintln(w, "\njudge audit:")
		verdicts := map[string]string{}
		for _, g := range v.auditGates {
			verdicts[g.figure] = g.Message
		}
		for _, line := range audit.LinesJudged(v.audit, verdicts) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	if v.chose != "" {
		fmt.Fprintf(w, "\n%s\n", v.chose)
	}
	if c := v.Baseline; c != nil {
		fmt.Fprintf(w, "\nagainst baseline run %d (paired by sample; a regression's 95%% CI lies below -%s):\n", c.BaselineRunID, strconv.FormatFloat(c.Tolerance, 'g', -1, 64))
		for _, d := range c.Metrics {
			fmt.Fprintf(w, "  %s\n", d.Message())
		}
		for _, u := range c.Unmatched {
			fmt.Fprintf(w, "  not compared: %s\n", u)
		}
	}
}

func okWord(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
