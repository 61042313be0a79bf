package gate

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the outcome as markdown fit for a CI job summary:
// the outcome, the summary table, the gates and the comparison with the
// baseline, with a link to the report when there is one.
func (v *Outcome) WriteMarkdown(w io.Writer) error {
	s := v.Summary
	var b strings.Builder
	mark := "✅"
	if !v.Passed() {
		mark = "❌"
	}
	fmt.Fprintf(&b, "## %s assay run %d %s: %s\n\n", mark, s.RunID, cell(s.Name), v.outcome())
	fmt.Fprintf(&b, "%d/%d results · %d errors · $%.4f · dataset SHA-256 `%.12s`", s.Results, s.TotalTasks, s.Errors, s.CostUSD, s.DatasetSHA256)
	if v.ReportURL != "" {
		fmt.Fprintf(&b, " · [report](%s)", v.ReportURL)
	}
	b.WriteString("\n\n| condition | metric | mean | 95% CI | n | errors |\n|---|---|---:|---|---:|---:|\n")
	for _, c := range s.Conditions {
		for _, m := range c.Metrics {
			fmt.Fprintf(&b, "| %s | %s | %s | [%s, %s] | %d | %d |\n", cell(c.Name), cell(m.Evaluator+"."+m.Name),
				num(m.Mean), num(m.CI95[0]), num(m.CI95[1]), m.N, c.Errors+c.JudgeErrors)
		}
		if len(c.Metrics) == 0 {
			fmt.Fprintf(&b, "| %s | — | | | 0 | %d |\n", cell(c.Name), c.Errors+c.JudgeErrors)
		}
	}
	if len(v.Gates) > 0 {
		v.markdownGates(&b)
	}
	if v.Baseline != nil {
		v.markdownBaseline(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownGates writes the gates' table: each gate's mark, condition,
// value and count.
func (v *Outcome) markdownGates(b *strings.Builder) {
	b.WriteString("\n### Gates\n\n| | condition | gate | value | n |\n|---|---|---|---:|---:|\n")
	for _, g := range v.Gates {
		value := "no scores"
		if strings.HasPrefix(g.Bound, OfAgreement+".") || strings.HasPrefix(g.Bound, OfPPI+".") {
			value = "no reviews"
		}
		if g.N > 0 {
			value = num(g.Value)
		}
		cond := g.Condition
		if cond == "" {
			cond = "every one" // a gate on the judge's agreement, over every condition's reviews
		}
		fmt.Fprintf(b, "| %s | %s | `%s` | %s | %d |\n", okMark(g.Held), cell(cond), strings.ReplaceAll(g.Gate, "`", "'"), value, g.N)
	}
}

// markdownBaseline writes the comparison with the baseline: a row per
// condition and metric, a regression marked as failing or only warned of.
func (v *Outcome) markdownBaseline(b *strings.Builder) {
	c := v.Baseline
	fmt.Fprintf(b, "\n### Against baseline run %d (tolerance %s)\n\n", c.BaselineRunID, num(c.Tolerance))
	b.WriteString("| | condition | metric | baseline | this run | diff | 95% CI | n |\n|---|---|---|---:|---:|---:|---|---:|\n")
	for _, d := range c.Metrics {
		mark := okMark(!d.Regressed)
		if d.Regressed && !v.FailRegressions {
			mark = "⚠️"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | [%s, %s] | %d |\n", mark, cell(d.Condition), cell(d.Metric),
			num(d.Baseline), num(d.Mean), signed(d.Diff), signed(d.CI95[0]), signed(d.CI95[1]), d.N)
	}
	for _, u := range c.Unmatched {
		fmt.Fprintf(b, "\nNot compared: %s.\n", cell(u))
	}
}

// outcome says in a few words how the run went.
func (v *Outcome) outcome() string {
	s := v.Summary
	if !v.Completed() {
		out := "did not complete (" + string(s.Status)
		if s.Message != "" {
			out += ": " + cell(s.Message)
		}
		return out + ")"
	}
	var failed []string
	n := 0
	for _, g := range v.Gates {
		if !g.Held {
			n++
		}
	}
	if n > 0 {
		failed = append(failed, plural(n, "gate")+" failed")
	}
	if v.Baseline != nil && v.Baseline.Regressions > 0 {
		r := plural(v.Baseline.Regressions, "regression")
		if !v.FailRegressions {
			r += " (not gated)"
		}
		failed = append(failed, r)
	}
	if len(failed) == 0 {
		return "passed"
	}
	if v.Passed() {
		return "passed, " + strings.Join(failed, ", ")
	}
	return strings.Join(failed, ", ")
}

func okMark(ok bool) string {
	if ok {
		return "✅"
	}
	return "❌"
}

// cell makes text safe inside a markdown table cell.
func cell(s string) string {
	s = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;").Replace(s)
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
