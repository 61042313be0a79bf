package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const savedSource = `metrics:
  - name: cites_runbook
    description: Points to the runbook.
    scale: pass
unverified_claims: true
`

// A saved rubric reads like a run file's rubrics.NAME, and its problems say
// on which line of its text.
func TestParseRubric(t *testing.T) {
	r, err := ParseRubric("runbook", savedSource, "rubric")
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "runbook" || len(r.Metrics) != 1 || r.Metrics[0].Scale != "pass" || !r.UnverifiedClaims {
		t.Errorf("read %+v", r)
	}
	for _, tc := range []struct{ name, source, want string }{
		{"runbook", "metrics:\n  - name: ok\n    description: d\n    scale: 1-10\n", `rubric:4: metrics[0].scale: want "1-5", "0-1" or "pass" (got "1-10")`},
		{"runbook", "metrics:\n  - name: ok\n    scale: pass\n", `rubric:2: metrics[0].description: required`},
		{"runbook", "metrics:\n  - name: ok\n    description: d\n    scale: pass\n    levle: {}\n", `rubric:5: metrics[0].levle: unknown key`},
		{"runbook", "", `metrics: required: at least one metric`},
		{"runbook", "metrics: [", `rubric: yaml:`},
		{"Runbook", savedSource, `name: want up to 40 lower-case letters`},
		{"arbiter", savedSource, `"arbiter" is the name of a built-in evaluator`},
		{"contains", savedSource, `"contains" is the name of a built-in evaluator`},
	} {
		_, err := ParseRubric(tc.name, tc.source, "rubric")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v, want %q", tc.name, tc.source, err, tc.want)
		}
	}
}

// A run file's {judge: NAME} finds a saved rubric when its rubrics has none
// of that name, and the config keeps a copy; its own rubric of that name wins.
func TestRunFilesUseSavedRubrics(t *testing.T) {
	base := "dataset: {path: q.jsonl}\nagent: {type: openai, model: m}\njudge: {model: j}\nconditions: {baseline: {}}\n"
	lookups := 0
	saved := SavedRubrics(func(name string) (*Rubric, error) {
		lookups++
		switch name {
		case "runbook":
			return ParseRubric(name, savedSource, "rubric "+name)
		case "broken":
			return nil, errors.New("rubric broken:3: metrics[0].scale: want \"1-5\"")
		}
		return nil, nil
	})
	c, err := Parse([]byte(base+"evaluators: [rubric, {judge: runbook}]\n"), "run.yaml", t.TempDir(), nil, saved)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := c.RubricNamed("runbook")
	if !ok || r.Metrics[0].Name != "cites_runbook" {
		t.Fatalf("the saved rubric was not copied: %+v", c.Rubrics)
	}
	own := base + "rubrics: {runbook: {metrics: [{name: mine, description: d, scale: 0-1}]}}\nevaluators: [{judge: runbook}]\n"
	lookups = 0
	c, err = Parse([]byte(own), "run.yaml", t.TempDir(), nil, saved)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := c.RubricNamed("runbook"); r.Metrics[0].Name != "mine" || lookups != 0 || len(c.Rubrics) != 1 {
		t.Errorf("the file's own rubric should win without a lookup: %+v, %d lookups", c.Rubrics, lookups)
	}
	for _, tc := range []struct{ ev, want string }{
		{"{judge: nowhere}", `run.yaml:6: evaluators[0].judge: no rubric "nowhere" under rubrics, nor saved on the Rubrics page`},
		{"{judge: broken}", `run.yaml:6: evaluators[0].judge: the saved rubric "broken": rubric broken:3`},
	} {
		_, err := Parse([]byte(base+"evaluators:\n  - "+tc.ev+"\n"), "run.yaml", t.TempDir(), nil, saved)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.ev, err, tc.want)
		}
	}
	// Without the option, a run file names only its own rubrics.
	if _, err := Parse([]byte(base+"evaluators: [{judge: runbook}]\n"), "run.yaml", t.TempDir(), nil); err == nil {
		t.Error("a saved rubric was found without the option")
	}
}

// The run form's Assertions box reads a list the way a run file's evaluators
// do, and says which item is wrong.
func TestParseAssertions(t *testing.T) {
	list, err := ParseAssertions("- contains: runbook\n- max_length: {words: 120}\n- json_valid\n", "Assertions")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range list {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, " | "); got != `contains "runbook" | max_length 120 words | json_valid` {
		t.Errorf("read %s", got)
	}
	if list, err := ParseAssertions("  \n", "Assertions"); err != nil || len(list) != 0 {
		t.Errorf("an empty box: %v %v", list, err)
	}
	for _, tc := range []struct{ text, want string }{
		{"- contains: a\n- regex: \"(\"\n", `Assertions:2: item 2.regex: not a regular expression`},
		{"contains: a\n", `Assertions:1: want a list`},
		{"- rubric\n", `Assertions:1: item 1: want an evaluator's name`},
		{"- contain: a\n", `item 1.contain: unknown assertion (did you mean contains?)`},
		{"- json_schema: {file: s.json}\n", `a schema file can only be named in a run file`},
	} {
		_, err := ParseAssertions(tc.text, "Assertions")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
}

// json_schema takes its schema from a file beside the run file; the same
// assertion twice is refused (both would write one metric).
func TestAssertionSchemaFromAFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "answer.schema.json"), []byte(`{"type": "object", "required": ["answer"]}`), 0o644)
	base := "dataset: {path: q.jsonl}\nagent: {type: openai, model: m}\nconditions: {baseline: {}}\nevaluators:\n"
	c, err := Parse([]byte(base+"  - json_schema: {file: answer.schema.json}\n"), "run.yaml", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(c.Assertions[0].Schema); !strings.Contains(got, `"required":["answer"]`) {
		t.Errorf("schema %s", got)
	}
	_, err = Parse([]byte(base+"  - json_schema: {file: missing.json}\n"), "run.yaml", dir, nil)
	if err == nil || !strings.Contains(err.Error(), "run.yaml:5: evaluators[0].json_schema: the schema file:") {
		t.Errorf("a missing schema file: %v", err)
	}
	_, err = Parse([]byte(base+"  - contains: a\n  - contains: a\n"), "run.yaml", dir, nil)
	if err == nil || !strings.Contains(err.Error(), `the assertion contains "a" is listed twice`) {
		t.Errorf("twice: %v", err)
	}
}

// A schema past the bounds is refused at once, naming the bound, without
// being read past it or readied: a 10 MB file of 200,000 properties took
// minutes and a gigabyte.
func TestAssertionSchemaWithinBounds(t *testing.T) {
	dir := t.TempDir()
	props := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"type": "object", "properties": {`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"p%d": {"type": "string"}`, i)
		}
		b.WriteString("}}")
		return b.String()
	}
	os.WriteFile(filepath.Join(dir, "huge.json"), []byte(props(200_000)), 0o644)
	os.WriteFile(filepath.Join(dir, "wide.json"), []byte(props(1_500)), 0o644)
	os.WriteFile(filepath.Join(dir, "fine.json"), []byte(props(200)), 0o644)
	base := "dataset: {path: q.jsonl}\nagent: {type: openai, model: m}\nconditions: {baseline: {}}\nevaluators:\n"
	for file, want := range map[string]string{"huge.json": "huge.json is over 256 KiB", "wide.json": "a schema may have at most 1000"} {
		start := time.Now()
		_, err := Parse([]byte(base+"  - json_schema: {file: "+file+"}\n"), "run.yaml", dir, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
		t.Logf("%s refused in %s", file, time.Since(start).Round(time.Millisecond))
	}
	if _, err := Parse([]byte(base+"  - json_schema: {file: fine.json}\n"), "run.yaml", dir, nil); err != nil {
		t.Errorf("a schema of 200 properties: %v", err)
	}
}

// A judge panel is read from judges:, each judge with the defaults of the
// one judge; mistakes name the judge.
func TestJudgePanels(t *testing.T) {
	base := "dataset: {path: q.jsonl}\nagent: {type: openai, model: m}\nconditions: {baseline: {}}\n"
	c, err := Parse([]byte(base+"judges:\n  - {model: gpt-4o}\n  - {name: claude, model: anthropic/claude-opus-4-5, seed: 0}\npanel: median\n"), "run.yaml", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Panel()
	if len(p) != 2 || p[0].Name != "gpt-4o" || p[0].Seed != 42 || p[1].Seed != 0 || p[1].APIKeyEnv != AnthropicKeyEnv ||
		p[0].APIKeyEnv != DefaultKeyEnv || p[1].TimeoutSeconds != 120 || c.Mode() != PanelMedian || c.Judge.Model != "gpt-4o" {
		t.Errorf("the panel %+v, mode %s", p, c.Mode())
	}
	if one, _ := Parse([]byte(base+"judge: {model: j}\n"), "run.yaml", t.TempDir(), nil); len(one.Panel()) != 1 || one.Mode() != PanelMean {
		t.Errorf("one judge is a panel of one: %+v", one.Panel())
	}
	for _, tc := range []struct{ file, want string }{
		{"judge: {model: a}\njudges: [{model: b}]\n", "judges: a panel is written under judges: alone"},
		{"judges: [{model: a}, {model: a}]\n", `judges[1].name: "a" twice`},
		{"judges: [{name: x}]\n", "judges[0].model: required"},
		{"judges: [{model: a, temperature: 3}]\n", "judges[0].temperature: must be between 0 and 2"},
		{"judges: [{model: a}]\npanel: vote\n", `panel: want mean, median or first (got "vote")`},
	} {
		_, err := Parse([]byte(base+tc.file), "run.yaml", t.TempDir(), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.file, err, tc.want)
		}
	}
}
