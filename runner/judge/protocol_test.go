package judge

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"assay/runner/llm/llmtest"
)

// kevalFields are k-eval's answer fields, which stored results rely on.
var kevalFields = []string{
	"completeness", "completeness_reasoning", "factual_adherence", "factual_adherence_reasoning",
	"helpfulness_and_clarity", "helpfulness_and_clarity_reasoning", "unverified_claims",
}

func TestJudgeRequestIsPinnedAndStrict(t *testing.T) {
	srv := llmtest.New(llmtest.Judge(nil))
	defer srv.Close()
	if _, err := (&Rubric{Client: judgeClient(srv)}).Judge(context.Background(), sample); err != nil {
		t.Fatalf("Judge: %v", err)
	}
	var body struct {
		Temperature    json.RawMessage `json:"temperature"`
		Seed           int             `json:"seed"`
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string `json:"name"`
				Strict bool   `json:"strict"`
				Schema struct {
					Properties           map[string]any `json:"properties"`
					Required             []string       `json:"required"`
					AdditionalProperties *bool          `json:"additionalProperties"`
				} `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if string(body.Temperature) != "0" || body.Seed != 7 {
		t.Errorf("temperature %s seed %d, want 0 and 7", body.Temperature, body.Seed)
	}
	rf := body.ResponseFormat
	schema := rf.JSONSchema.Schema
	props := slices.Sorted(maps.Keys(schema.Properties))
	if rf.Type != "json_schema" || rf.JSONSchema.Name == "" || !rf.JSONSchema.Strict ||
		schema.AdditionalProperties == nil || *schema.AdditionalProperties {
		t.Errorf("response_format %+v", rf)
	}
	if !slices.Equal(props, kevalFields) || !slices.Equal(slices.Sorted(slices.Values(schema.Required)), kevalFields) {
		t.Errorf("properties %v, required %v; want %v", props, schema.Required, kevalFields)
	}
}

func TestFallbackPutsTheSchemaInThePrompt(t *testing.T) {
	srv := llmtest.New(llmtest.Judge(nil), llmtest.WithoutStructuredOutput())
	defer srv.Close()
	v, err := (&Rubric{Client: judgeClient(srv)}).Judge(context.Background(), sample)
	if err != nil {
		t.Fatalf("Judge: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].ResponseFormat == nil || reqs[1].ResponseFormat != nil {
		t.Fatalf("want a structured request, then one without response_format; got %d", len(reqs))
	}
	if !strings.Contains(reqs[1].System(), `"additionalProperties":false`) || *reqs[1].Temperature != 0 {
		t.Errorf("fallback system prompt lacks the schema or temperature: %s", reqs[1].Body)
	}
	if v.Structured || !strings.Contains(v.Raw, "```json") {
		t.Errorf("structured %v raw %q: want the fenced fallback answer", v.Structured, v.Raw)
	}
}

func TestRead(t *testing.T) {
	valid := rubricAnswer(5, 4, 3)
	tests := []struct {
		name, content, finish, problem string
	}{
		{name: "bare", content: valid},
		{name: "fenced", content: "```json\n" + valid + "\n```"},
		{name: "prose with an example object first", content: `Use {"x": 1}? No. Judgement: ` + valid + ` Done.`},
		{name: "whole numbers as floats", content: rubricAnswer(5.0, 1.0, 3)},
		{name: "missing field", content: `{"factual_adherence": 5}`, problem: "completeness: missing"},
		{name: "below range", content: rubricAnswer(0, 4, 3), problem: "factual_adherence: 0 is outside 1–5"},
		{name: "null claims", content: strings.Replace(valid, `"unverified_claims":[]`, `"unverified_claims":null`, 1),
			problem: "unverified_claims: not an array of strings"},
		{name: "empty reasoning", content: strings.Replace(valid, `"direct"`, `"  "`, 1),
			problem: "helpfulness_and_clarity_reasoning: empty"},
		{name: "a field given twice", content: strings.Replace(valid, `{`, `{"completeness": 1, `, 1),
			problem: "completeness: given 2 times"},
		{name: "a brace inside a string", content: `Note: "{" ` + strings.Replace(valid, `"direct"`, `"direct {not json}"`, 1)},
		{name: "an unclosed brace before the answer", content: `{ oops ` + valid},
		{name: "cut off", content: `{"factual_adherence_reasoning": "The resp`, finish: "length",
			problem: "the answer was cut off at the token limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			metrics, _, problem := rubricForm.read(context.Background(), tt.content, tt.finish)
			if tt.problem == "" && (problem != "" || len(metrics) != 3) {
				t.Errorf("problem %q, metrics %+v; want a valid answer", problem, metrics)
			}
			if tt.problem != "" && !strings.Contains(problem, tt.problem) {
				t.Errorf("problem %q, want %q", problem, tt.problem)
			}
		})
	}
}
