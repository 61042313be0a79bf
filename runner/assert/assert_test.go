package assert

import (
	"strings"
	"testing"

	"assay/config"
)

// Each assertion on hand-made answers, passing and failing, and what it says.
func TestAssertions(t *testing.T) {
	schema := []byte(`{"type": "object", "required": ["answer"], "properties": {"answer": {"type": "integer"}}}`)
	for _, tc := range []struct {
		a    config.Assertion
		ans  Answer
		pass bool
		says string
	}{
		{config.Assertion{Kind: "contains", Text: "Runbook"}, Answer{Text: "See the runbook, step 3."}, true, "found at character 9"},
		{config.Assertion{Kind: "contains", Text: "Runbook", CaseSensitive: true}, Answer{Text: "See the runbook."}, false, "not found"},
		{config.Assertion{Kind: "not_contains", Text: "rm -rf"}, Answer{Text: "Run rm -rf / to clean up."}, false, "found at character 5"},
		{config.Assertion{Kind: "not_contains", Text: "rm -rf"}, Answer{Text: "Delete the folder in the UI."}, true, "not found"},
		{config.Assertion{Kind: "equals", Text: "42"}, Answer{Text: " 42\n"}, true, `wanted exactly "42"`},
		{config.Assertion{Kind: "equals", Text: "42"}, Answer{Text: "The answer is 42"}, false, `the answer is "The answer is 42"`},
		{config.Assertion{Kind: "starts_with", Text: "yes"}, Answer{Text: "Yes, it is."}, true, "starts"},
		{config.Assertion{Kind: "starts_with", Text: "yes", CaseSensitive: true}, Answer{Text: "Yes, it is."}, false, "starts"},
		{config.Assertion{Kind: "regex", Pattern: `\b\d{3}-\d{4}\b`}, Answer{Text: "Call 555-0100 now"}, true, `matched "555-0100" at character 6`},
		{config.Assertion{Kind: "regex", Pattern: `^\d+$`}, Answer{Text: "twelve"}, false, "matched nothing"},
		{config.Assertion{Kind: "json_valid"}, Answer{Text: `{"a": [1, 2]}`}, true, "valid JSON"},
		{config.Assertion{Kind: "json_valid"}, Answer{Text: "{\"a\":\n [1, 2}"}, false, "line 2"},
		{config.Assertion{Kind: "json_schema", Schema: schema}, Answer{Text: `{"answer": 4}`}, true, "fits the schema"},
		{config.Assertion{Kind: "json_schema", Schema: schema}, Answer{Text: `{"answer": "four"}`}, false, "does not fit the schema"},
		{config.Assertion{Kind: "max_length", Limit: 3, Words: true}, Answer{Text: "one two three"}, true, "3 words, at most 3"},
		{config.Assertion{Kind: "max_length", Limit: 3, Words: true}, Answer{Text: "one two three four"}, false, "4 words"},
		{config.Assertion{Kind: "min_length", Limit: 5}, Answer{Text: "héllo"}, true, "5 characters, at least 5"},
		{config.Assertion{Kind: "min_length", Limit: 6}, Answer{Text: "héllo"}, false, "5 characters"},
		{config.Assertion{Kind: "latency_ms_below", Limit: 1000}, Answer{LatencyMS: 999}, true, "999 ms"},
		{config.Assertion{Kind: "latency_ms_below", Limit: 1000}, Answer{LatencyMS: 1000}, false, "1000 ms"},
		{config.Assertion{Kind: "cost_below", Limit: 0.01}, Answer{CostUSD: 0.002}, true, "$0.002000"},
		{config.Assertion{Kind: "cost_below", Limit: 0.01}, Answer{CostUSD: 0.02}, false, "$0.020000"},
	} {
		pass, says := Check(tc.a, tc.ans)
		if pass != tc.pass || !strings.Contains(says, tc.says) {
			t.Errorf("%s %+v on %q: %v %q, want %v saying %q", tc.a.Kind, tc.a, tc.ans.Text, pass, says, tc.pass, tc.says)
		}
	}
}
