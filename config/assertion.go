package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"gopkg.in/yaml.v3"
)

// Assertion is a deterministic check of an answer, written in a run file's
// evaluators as a one-key mapping ({contains: "runbook"}). Each is a metric
// of its own, pass (1) or fail (0), under the evaluator named by its kind.
type Assertion struct {
	Kind          string          `json:"kind"`
	Name          string          `json:"name"`                     // the metric's name: the kind and what it checks
	Text          string          `json:"text,omitempty"`           // contains, not_contains, equals, starts_with
	CaseSensitive bool            `json:"case_sensitive,omitempty"` // of Text; false: any case
	Pattern       string          `json:"pattern,omitempty"`        // regex
	Schema        json.RawMessage `json:"schema,omitempty"`         // json_schema
	Limit         float64         `json:"limit,omitempty"`          // max_length, min_length, latency_ms_below, cost_below
	Words         bool            `json:"words,omitempty"`          // lengths in words, not characters
}

// The kinds of assertion.
const (
	AssertContains    = "contains"
	AssertNotContains = "not_contains"
	AssertEquals      = "equals"
	AssertStartsWith  = "starts_with"
	AssertRegex       = "regex"
	AssertJSONValid   = "json_valid"
	AssertJSONSchema  = "json_schema"
	AssertMaxLength   = "max_length"
	AssertMinLength   = "min_length"
	AssertLatency     = "latency_ms_below"
	AssertCost        = "cost_below"
)

// AssertionKinds lists every kind of assertion.
var AssertionKinds = []string{AssertContains, AssertNotContains, AssertEquals, AssertStartsWith, AssertRegex,
	AssertJSONValid, AssertJSONSchema, AssertMaxLength, AssertMinLength, AssertLatency, AssertCost}

// IsAssertion reports whether an evaluator's name is an assertion's kind.
func IsAssertion(e Evaluator) bool { return slices.Contains(AssertionKinds, string(e)) }

// decodeAssertion reads one evaluators item written as a mapping, or bare
// for an assertion that takes no argument (json_valid).
func (d *decoder) decodeAssertion(n *yaml.Node, path string) (Assertion, bool) {
	if n.Kind == yaml.ScalarNode && slices.Contains(AssertionKinds, n.Value) {
		if n.Value != AssertJSONValid {
			d.fail(n.Line, path, "the assertion %s needs an argument: write it as {%s: …}", n.Value, n.Value)
			return Assertion{}, false
		}
		return Assertion{Kind: AssertJSONValid, Name: AssertJSONValid}, true
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		d.fail(n.Line, path, "want an evaluator's name (rubric, arbiter, …) or one assertion such as {contains: \"text\"}")
		return Assertion{}, false
	}
	key, val := n.Content[0], n.Content[1]
	a := Assertion{Kind: key.Value}
	p := joinPath(path, key.Value)
	if !slices.Contains(AssertionKinds, a.Kind) {
		d.fail(key.Line, p, "unknown assertion%s (want one of %s)", suggest(a.Kind, AssertionKinds), strings.Join(AssertionKinds, ", "))
		return a, false
	}
	if err := assertionArgs[a.Kind](d, val, &a); err != nil {
		d.fail(val.Line, p, "%v", err)
		return a, false
	}
	return a, true
}

// assertionArgs read each assertion kind's argument into its assertion,
// naming it, or say what is wrong with it.
var assertionArgs = map[string]func(d *decoder, val *yaml.Node, a *Assertion) error{
	AssertContains: textArg, AssertNotContains: textArg, AssertEquals: textArg, AssertStartsWith: textArg,
	AssertRegex:      regexArg,
	AssertJSONValid:  func(_ *decoder, _ *yaml.Node, a *Assertion) error { a.Name = AssertJSONValid; return nil },
	AssertJSONSchema: schemaArg,
	AssertMaxLength:  lengthArg, AssertMinLength: lengthArg,
	AssertLatency: limitArg, AssertCost: limitArg,
}

// textArg reads "text" or {text: "…", case_sensitive: true|false}.
func textArg(_ *decoder, val *yaml.Node, a *Assertion) error {
	switch val.Kind {
	case yaml.ScalarNode:
		a.Text = val.Value
	case yaml.MappingNode:
		var spec struct {
			Text          string `yaml:"text"`
			CaseSensitive bool   `yaml:"case_sensitive"`
		}
		if err := val.Decode(&spec); err != nil {
			return fmt.Errorf("want {text: \"…\", case_sensitive: true|false}: %v", err)
		}
		a.Text, a.CaseSensitive = spec.Text, spec.CaseSensitive
	default:
		return errors.New("want the text to look for")
	}
	if a.Text == "" {
		return errors.New("the text to look for is empty")
	}
	a.Name = fmt.Sprintf("%s %q", a.Kind, a.Text)
	return nil
}

func regexArg(_ *decoder, val *yaml.Node, a *Assertion) error {
	if val.Kind != yaml.ScalarNode || val.Value == "" {
		return errors.New("want a regular expression")
	}
	if _, err := regexp.Compile(val.Value); err != nil {
		return fmt.Errorf("not a regular expression: %v", err)
	}
	a.Pattern, a.Name = val.Value, fmt.Sprintf("regex /%s/", val.Value)
	return nil
}

// schemaArg reads a JSON schema written inline as a mapping, or {file: F}.
func schemaArg(d *decoder, val *yaml.Node, a *Assertion) error {
	var schema any
	if val.Kind == yaml.MappingNode && len(val.Content) == 2 && val.Content[0].Value == "file" {
		var err error
		if schema, err = d.schemaFile(val.Content[1].Value); err != nil {
			return err
		}
	} else if err := val.Decode(&schema); err != nil || val.Kind != yaml.MappingNode {
		return errors.New("want a JSON schema, written inline as a mapping or as {file: schema.json}")
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return fmt.Errorf("the schema cannot be written as JSON: %v", err)
	}
	if _, err := ResolveSchema(raw); err != nil {
		return err
	}
	a.Schema, a.Name = raw, "json_schema"
	return nil
}

// lengthArg reads N characters, or {chars: N} or {words: N}.
func lengthArg(_ *decoder, val *yaml.Node, a *Assertion) error {
	unit := "chars"
	s := val.Value
	if val.Kind == yaml.MappingNode && len(val.Content) == 2 {
		unit, s = val.Content[0].Value, val.Content[1].Value
	}
	if unit != "chars" && unit != "words" {
		return errors.New("want a number of characters, or {chars: N} or {words: N}")
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return fmt.Errorf("want a whole number of %s, got %q", unit, s)
	}
	a.Limit, a.Words = float64(n), unit == "words"
	a.Name = fmt.Sprintf("%s %d %s", a.Kind, n, unit)
	return nil
}

// limitArg reads a positive number: seconds, or dollars.
func limitArg(_ *decoder, val *yaml.Node, a *Assertion) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(val.Value), 64)
	if val.Kind != yaml.ScalarNode || err != nil || f <= 0 {
		return errors.New("want a positive number")
	}
	a.Limit, a.Name = f, fmt.Sprintf("%s %s", a.Kind, val.Value)
	return nil
}

// ResolveSchema reads a JSON schema, within MaxSchemaBytes and
// MaxSchemaObjects, and readies it for validating answers. A schema readied
// before is given again: an assertion checks every answer of a run.
func ResolveSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	if len(raw) > MaxSchemaBytes {
		return nil, fmt.Errorf("the schema is %d KiB; a schema may be at most %d KiB", len(raw)>>10, MaxSchemaBytes>>10)
	}
	resolved.Lock()
	rs, ok := resolved.m[string(raw)]
	resolved.Unlock()
	if ok {
		return rs, nil
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("not a JSON schema: %v", err)
	}
	if n := countObjects(tree, MaxSchemaObjects+1); n > MaxSchemaObjects {
		return nil, fmt.Errorf("the schema has over %d objects (subschemas and properties); a schema may have at most %d", MaxSchemaObjects, MaxSchemaObjects)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("not a JSON schema: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("not a usable JSON schema: %v", err)
	}
	resolved.Lock()
	if len(resolved.m) >= 64 {
		clear(resolved.m) // the schemas of the runs under way are readied again
	}
	resolved.m[string(raw)] = rs
	resolved.Unlock()
	return rs, nil
}

// resolved are the schemas readied last, by their JSON text.
var resolved = struct {
	sync.Mutex
	m map[string]*jsonschema.Resolved
}{m: map[string]*jsonschema.Resolved{}}

// countObjects counts the JSON objects in v, stopping once it reaches limit.
func countObjects(v any, limit int) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n >= limit {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			n++
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return n
}

// schemaFile reads a JSON schema named by a run file, relative to its folder.
func (d *decoder) schemaFile(name string) (any, error) {
	if d.dir == "" {
		return nil, fmt.Errorf("a schema file can only be named in a run file; write the schema inline")
	}
	if name == "" {
		return nil, fmt.Errorf("want the path of a JSON schema file")
	}
	data, err := readBounded(resolvePath(d.dir, name), MaxSchemaBytes)
	if err != nil {
		return nil, fmt.Errorf("the schema file: %v", err)
	}
	var schema any
	if err := yaml.Unmarshal(data, &schema); err != nil {
		return nil, fmt.Errorf("the schema file %s: %v", name, err)
	}
	if _, ok := schema.(map[string]any); !ok {
		return nil, fmt.Errorf("the schema file %s holds no JSON object", name)
	}
	return schema, nil
}

// ParseAssertions reads a list of assertions written as a run file's
// evaluators write them (- contains: "runbook"), such as the run form's
// Assertions box; file names the text in messages, which give its lines.
func ParseAssertions(text, file string) ([]Assertion, error) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(text), &root); err != nil {
		return nil, &FieldError{File: file, Err: err}
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	list := root.Content[0]
	if list.Kind != yaml.SequenceNode {
		return nil, &FieldError{File: file, Line: list.Line, Err: fmt.Errorf("want a list, one assertion per line: - contains: \"text\"")}
	}
	var out []Assertion
	d := &decoder{file: file, lines: map[string]int{}, refs: map[string]ref{}, assertions: &out}
	for i, item := range list.Content {
		if a, ok := d.decodeAssertion(item, fmt.Sprintf("item %d", i+1)); ok {
			out = append(out, a)
		}
	}
	if len(d.errs) > 0 {
		return nil, joinSorted(d.errs)
	}
	return out, nil
}
