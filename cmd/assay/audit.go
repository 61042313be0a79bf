package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"regexp"
	"strconv"
	"strings"

	"assay"
	"assay/report"
	"assay/report/gate"
	"assay/runner"
	"assay/runner/audit"
	"assay/store"
	"assay/tally"
)

// cmdAudit audits the judge of a finished run: how far padding moves its
// scores, how often two answers' order decides, whether it judges its own
// family, how a panel's judges err together. Exit 1 when a gate fails.
func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a, err := parseAuditArgs(args, stderr)
	if err != nil {
		return badUsage(err)
	}
	db, err := tally.Open(ctx, a.dbPath)
	if err != nil {
		return badUsage(err)
	}
	defer db.Close()
	m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Program: "assay audit"})
	defer m.Close(context.Background())
	if a.estimateOnly {
		est, err := m.AuditEstimate(ctx, a.runID, a.opts)
		if err != nil {
			return badUsage(fmt.Errorf("audit: %s", assay.ErrorMessage(err)))
		}
		if a.asJSON {
			return json.NewEncoder(stdout).Encode(est)
		}
		fmt.Fprintf(stdout, "audit of run %d: %d judge calls, %s\n", a.runID, est.Calls, costText(est))
		return nil
	}
	res, err := m.AuditAndKeep(ctx, a.runID, a.opts)
	if err != nil {
		return badUsage(fmt.Errorf("audit: %s", assay.ErrorMessage(err)))
	}
	failed, verdicts := judgeAuditGates(a.gates, res)
	judged, err := judgeJudgeGates(ctx, db, a.runID, a.judgeGates)
	if err != nil {
		return err
	}
	for _, r := range judged {
		if !r.Held {
			failed = append(failed, r.Gate+": "+r.Message)
		}
	}
	if err := reportAudit(stdout, res, a, failed, verdicts); err != nil {
		return err
	}
	if !a.asJSON {
		printJudgeGates(stdout, judged)
	}
	if len(failed) > 0 {
		return &exitError{code: exitGateFailed, err: errSilent}
	}
	return nil
}

// auditArgs is what assay audit was asked.
type auditArgs struct {
	runID                int64
	opts                 audit.Options
	dbPath               string
	estimateOnly, asJSON bool
	gates                []string    // on the audit's figures
	judgeGates           []gate.Gate // on the judge's agreement with people and its corrected means
}

// parseAuditArgs reads assay audit's flags and checks them and the database.
func parseAuditArgs(args []string, stderr io.Writer) (*auditArgs, error) {
	fs := newFlags("audit", stderr)
	runID := fs.Int64("run", 0, "the finished run whose judge to audit")
	probes := fs.String("probes", strings.Join(audit.AllProbes, ","), "the probes: "+strings.Join(audit.AllProbes, ", "))
	samples := fs.Int("samples", audit.DefaultSamples, "answers padded, and pairs of answers compared")
	budget := fs.Float64("budget", 0, "USD the audit may spend; an estimate over it is refused before any call (0: no bound)")
	seed := fs.Uint64("seed", 0, "seed of the answers picked")
	estimateOnly := fs.Bool("estimate", false, "print what the audit would call and cost, and call nothing")
	dbPath := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print the audit as one JSON object")
	var gates []string
	var judgeGates []gate.Gate
	fs.Func("gate", "fail (exit 1) unless the audit holds it, e.g. 'audit.verbosity<=0.2' (the size of the change), 'audit.position<=0.1' (the flip rate), "+
		"or the judge against people's reviews: 'agreement.METRIC.kappa>=0.6', 'agreement.METRIC.mae<=0.5', 'ppi.METRIC.shift<=0.2'; repeatable", func(s string) error {
		if g, err := gate.Parse(s); err == nil && g.Of != "" {
			judgeGates = append(judgeGates, g)
			return nil
		}
		if _, err := parseAuditGate(s); err != nil {
			return err
		}
		gates = append(gates, s)
		return nil
	})
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if *runID == 0 {
		return nil, fmt.Errorf("audit: --run RUN_ID is required")
	}
	list, err := audit.ParseProbes(*probes)
	if err != nil {
		return nil, fmt.Errorf("audit: --probes: %w", err)
	}
	if err := dbExists(*dbPath); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return &auditArgs{runID: *runID, opts: audit.Options{Probes: list, Samples: *samples, Budget: *budget, Seed: *seed},
		dbPath: *dbPath, estimateOnly: *estimateOnly, asJSON: *asJSON, gates: gates, judgeGates: judgeGates}, nil
}

// judgeAuditGates checks the gates against an audit: those that failed, with
// why, and what each figure's gate said.
func judgeAuditGates(gates []string, res *audit.Result) (failed []string, verdicts map[string]string) {
	verdicts = map[string]string{}
	for _, g := range gates {
		gate, _ := parseAuditGate(g)
		held, why := gate.holds(res)
		verdicts[gate.figure] = why
		if !held {
			failed = append(failed, g+": "+why)
		}
	}
	return failed, verdicts
}

// reportAudit prints an audit and its gates, as text or JSON.
func reportAudit(stdout io.Writer, res *audit.Result, a *auditArgs, failed []string, verdicts map[string]string) error {
	if a.asJSON {
		out := struct {
			*audit.Result
			Passed *bool    `json:"passed,omitempty"`
			Failed []string `json:"failed_gates,omitempty"`
		}{Result: res, Failed: failed}
		if len(a.gates)+len(a.judgeGates) > 0 {
			p := len(failed) == 0
			out.Passed = &p
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	printAudit(stdout, res, verdicts)
	if len(failed) > 0 {
		fmt.Fprintf(stdout, "%d of %s failed (said above and below)\n", len(failed), plural(len(a.gates)+len(a.judgeGates), "gate"))
	}
	return nil
}

// judgeJudgeGates judges the gates on a run's judge against people's
// reviews, on the run's report.
func judgeJudgeGates(ctx context.Context, db *store.DB, runID int64, gates []gate.Gate) ([]gate.Result, error) {
	if len(gates) == 0 {
		return nil, nil
	}
	r, err := report.Load(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	return gate.Judge(gates, r.Summary, r.Reviews), nil
}

// printJudgeGates says how each gate on the judge fared.
func printJudgeGates(w io.Writer, results []gate.Result) {
	for _, r := range results {
		word := "failed"
		if r.Held {
			word = "held"
		}
		fmt.Fprintf(w, "gate %s %s: %s\n", r.Gate, word, r.Message)
	}
}

// costText says what an estimate costs.
func costText(e audit.Estimate) string {
	if !e.Priced {
		return "the judge has no price"
	}
	return fmt.Sprintf("about $%.4f", e.CostUSD)
}

// printAudit writes an audit's figures as text, each judged by its gate
// (verdicts, by figure) where one was given.
func printAudit(w io.Writer, r *audit.Result, verdicts map[string]string) {
	fmt.Fprintf(w, "judge audit of run %d: %d calls, $%.4f (estimated %d, %s)", r.RunID, r.Calls, r.CostUSD, r.Estimate.Calls, costText(r.Estimate))
	if r.Errors > 0 {
		fmt.Fprintf(w, "; %d judge calls failed", r.Errors)
	}
	fmt.Fprintln(w)
	for _, line := range audit.LinesJudged(r, verdicts) {
		fmt.Fprintln(w, line)
	}
}

// auditGate is one --gate of assay audit: a probe's figure against a bound.
type auditGate struct {
	figure, op string
	bound      float64
}

var auditGateRe = regexp.MustCompile(`^\s*audit\.(verbosity|position|first_wins)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*$`)

func parseAuditGate(s string) (auditGate, error) {
	g := auditGateRe.FindStringSubmatch(s)
	if g == nil {
		return auditGate{}, fmt.Errorf("gate %q: want audit.verbosity, audit.position or audit.first_wins, then <=, >=, < or >, then a number", s)
	}
	bound, err := strconv.ParseFloat(g[3], 64)
	if err != nil || math.IsNaN(bound) || math.IsInf(bound, 0) {
		return auditGate{}, fmt.Errorf("gate %q: %q is not a number", s, g[3])
	}
	return auditGate{figure: g[1], op: g[2], bound: bound}, nil
}

// holds checks the gate against an audit, and says so with the figure's
// interval; a probe not run fails it.
func (g auditGate) holds(r *audit.Result) (bool, string) {
	var v float64
	var ci [2]float64
	what := g.figure
	switch p := r.Probes; g.figure {
	case "verbosity":
		if p.Verbosity == nil || p.Verbosity.Why != "" {
			return false, "gate failed: the verbosity probe gave no figure"
		}
		v, what = math.Abs(p.Verbosity.Delta), "the size of the change"
		lo, hi := math.Abs(p.Verbosity.CI95[0]), math.Abs(p.Verbosity.CI95[1])
		ci = [2]float64{min(lo, hi), max(lo, hi)}
		if p.Verbosity.CI95[0] <= 0 && p.Verbosity.CI95[1] >= 0 {
			ci[0] = 0
		}
	case "position":
		if p.Position == nil || p.Position.N == 0 {
			return false, "gate failed: the position probe gave no figure"
		}
		v, ci, what = p.Position.FlipRate, p.Position.FlipCI95, "the flip rate"
	case "first_wins":
		if p.Position == nil || p.Position.N == 0 {
			return false, "gate failed: the position probe gave no figure"
		}
		v, ci, what = p.Position.FirstWins, p.Position.CI95, "the first answer's share"
	}
	held := map[string]bool{"<=": v <= g.bound, ">=": v >= g.bound, "<": v < g.bound, ">": v > g.bound}[g.op]
	word := "failed"
	if held {
		word = "held"
	}
	return held, fmt.Sprintf("gate %s %s: %s, %.3f (95%% CI %.3f to %.3f), %s %g", g.text(), word, what, v, ci[0], ci[1], gate.Says(g.op, held), g.bound)
}

// text is the gate as written, spaces aside.
func (g auditGate) text() string {
	return "audit." + g.figure + g.op + strconv.FormatFloat(g.bound, 'g', -1, 64)
}
