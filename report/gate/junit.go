package gate

import (
	"encoding/xml"
	"fmt"
	"io"

	"assay/report"
)

// Outcome is everything a CI job learns from a run: its summary, the gates
// judged, and the comparison with a baseline.
type Outcome struct {
	Summary  *report.Summary
	Gates    []Result
	Baseline *Comparison
	// FailRegressions makes a regression fail the outcome (--gate-regressions).
	FailRegressions bool
	ReportURL       string // a link to the run's report; may be ""
}

// Completed reports whether the run finished all its work.
func (v *Outcome) Completed() bool { return v.Summary.Status == "completed" }

// Passed reports whether the run completed, every gate held and, when
// regressions fail it, none was found.
func (v *Outcome) Passed() bool {
	return v.Completed() && Held(v.Gates) && !(v.FailRegressions && v.Baseline != nil && v.Baseline.Regressions > 0)
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitFailure `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the outcome as JUnit XML: a suite for the run (did it
// complete), one for the gates with a case per condition and gate, and one
// for the baseline with a case per condition and metric, failing on a
// regression only when regressions fail the run.
func (v *Outcome) WriteJUnit(w io.Writer) error {
	name := fmt.Sprintf("assay run %d", v.Summary.RunID)
	suites := []junitSuite{v.runSuite(name)}
	if len(v.Gates) > 0 {
		suites = append(suites, v.gateSuite(name))
	}
	if v.Baseline != nil {
		suites = append(suites, v.baselineSuite(name))
	}
	out := junitSuites{Name: name}
	for i := range suites {
		suites[i].count()
		out.Tests += suites[i].Tests
		out.Failures += suites[i].Failures
	}
	out.Suites = suites
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// count counts the suite's cases, failed and skipped.
func (s *junitSuite) count() {
	for _, c := range s.Cases {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		if c.Skipped != nil {
			s.Skipped++
		}
	}
}

// runSuite is the run's suite: one case, failing when it did not complete.
func (v *Outcome) runSuite(name string) junitSuite {
	s := v.Summary
	run := junitSuite{Name: name + ": run", Cases: []junitCase{{ClassName: "run", Name: "completed",
		SystemOut: fmt.Sprintf("%d/%d results, %d errors, $%.4f", s.Results, s.TotalTasks, s.Errors, s.CostUSD)}}}
	if !v.Completed() {
		msg := fmt.Sprintf("the run ended %s", s.Status)
		if s.Message != "" {
			msg += ": " + s.Message
		}
		run.Cases[0].Failure = &junitFailure{Message: msg, Type: "incomplete", Text: msg}
	}
	return run
}

// gateSuite is a case per condition and gate, failing where it did not hold.
func (v *Outcome) gateSuite(name string) junitSuite {
	gs := junitSuite{Name: name + ": gates"}
	for _, g := range v.Gates {
		c := junitCase{ClassName: g.Condition, Name: g.Gate, SystemOut: g.Message}
		if !g.Held {
			c.Failure = &junitFailure{Message: g.Message, Type: "gate", Text: g.Message}
		}
		gs.Cases = append(gs.Cases, c)
	}
	return gs
}

// baselineSuite is a case per condition and metric against the baseline;
// a regression fails its case when regressions fail the run, and is
// skipped otherwise.
func (v *Outcome) baselineSuite(name string) junitSuite {
	b := v.Baseline
	bs := junitSuite{Name: fmt.Sprintf("%s: against baseline run %d", name, b.BaselineRunID)}
	for _, d := range b.Metrics {
		c := junitCase{ClassName: d.Condition, Name: d.Metric + " no regression", SystemOut: d.Message()}
		switch {
		case d.Regressed && v.FailRegressions:
			c.Failure = &junitFailure{Message: d.Message(), Type: "regression", Text: d.Message()}
		case d.Regressed:
			c.Skipped = &junitFailure{Message: d.Message() + " (not gated: --gate-regressions is off)"}
		}
		bs.Cases = append(bs.Cases, c)
	}
	return bs
}
