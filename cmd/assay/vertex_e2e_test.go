package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay/runner/llm/anthropictest"
	"assay/runner/llm/googletest"
	"assay/runner/llm/llmtest"
)

// A judge on Vertex AI as k-eval names it (LiteLLM's vertex_ai/claude-…,
// vertex_ai/gemini-…), reached with a service account's key file and
// LiteLLM's variables alone: the calls carry a token the fake Google token
// endpoint issued, the project and the location; a base URL replaces only
// Vertex's address, as a proxy in front of it would.
func TestAJudgeOnVertexAI(t *testing.T) {
	tokens := googletest.NewTokenServer(t)
	dir := t.TempDir()
	keyFile := tokens.ServiceAccountFile(t, dir, "sre-evals")
	claude := anthropictest.New(func(req *anthropictest.Request) anthropictest.Reply {
		if req.HasTool("answer") {
			return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "answer", Input: map[string]any{
				"factual_adherence": 5, "factual_adherence_reasoning": "right", "completeness": 4, "completeness_reasoning": "most",
				"helpfulness_and_clarity": 4, "helpfulness_and_clarity_reasoning": "clear", "unverified_claims": []string{}}}},
				Usage: anthropictest.Usage{InputTokens: 900, OutputTokens: 120}}
		}
		return anthropictest.Reply{Text: "not a judge's request"}
	})
	defer claude.Close()
	gemini := llmtest.New(llmtest.Judge(map[string]any{"factual_adherence": 3, "completeness": 3, "helpfulness_and_clarity": 3}))
	defer gemini.Close()
	agent := llmtest.New(llmtest.Text("Rome."))
	defer agent.Close()
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", keyFile)
	t.Setenv("VERTEXAI_PROJECT", "")
	t.Setenv("VERTEXAI_LOCATION", "europe-west4")
	t.Setenv("OPENAI_API_KEY", "")
	os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte(`{"question": "Capital of Italy?", "answer": "Rome"}
`), 0o644)
	for _, tc := range []struct {
		judge string
		base  string
		check func(t *testing.T)
	}{
		{"vertex_ai/claude-opus-4-5", claude.URL, func(t *testing.T) {
			reqs := claude.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests to Vertex's Anthropic endpoint, want 3", len(reqs))
			}
			for _, r := range reqs {
				auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				if r.Vertex == nil || r.Vertex.Project != "sre-evals" || r.Vertex.Location != "europe-west4" || r.Model != "claude-opus-4-5" ||
					r.Vertex.Version != "vertex-2023-10-16" || !tokens.Issued(auth) || r.Header.Get("X-Api-Key") != "" {
					t.Errorf("request %d: vertex %+v, model %q, token %q, key %q", r.Index, r.Vertex, r.Model, auth, r.Header.Get("X-Api-Key"))
				}
			}
		}},
		{"vertex_ai/gemini-2.5-pro", strings.TrimSuffix(gemini.URL, "/v1"), func(t *testing.T) {
			reqs := gemini.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests to Vertex's OpenAI-compatible endpoint, want 3", len(reqs))
			}
			for _, r := range reqs {
				auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				if r.Path != "/v1/projects/sre-evals/locations/europe-west4/endpoints/openapi/chat/completions" || r.Model != "google/gemini-2.5-pro" ||
					!tokens.Issued(auth) || !r.Structured() {
					t.Errorf("request %d: %s, model %q, token %q, structured %v", r.Index, r.Path, r.Model, auth, r.Structured())
				}
			}
		}},
	} {
		t.Run(tc.judge, func(t *testing.T) {
			cfg := filepath.Join(dir, "run.yaml")
			os.WriteFile(cfg, []byte(fmt.Sprintf(`name: vertex-judge
dataset: {path: ./q.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: %q, base_url: %q, temperature: 0.0}
conditions: {plain: {system_prompt: "Answer briefly."}}
`, agent.URL, tc.judge, tc.base)), 0o644)
			var out, errOut bytes.Buffer
			err := run(context.Background(), []string{"run", "--config", cfg, "--db", filepath.Join(t.TempDir(), "a.db"), "--quiet", "--json"}, &out, &errOut)
			if err != nil {
				t.Fatalf("assay run: %v\n%s", err, errOut.String())
			}
			var s struct {
				Results    int
				Conditions []struct {
					JudgeErrors int `json:"judge_errors"`
					Metrics     []struct{ Name string }
				}
			}
			json.Unmarshal(out.Bytes(), &s)
			if s.Results != 3 || s.Conditions[0].JudgeErrors != 0 || len(s.Conditions[0].Metrics) != 3 {
				t.Errorf("summary: %s", out.String())
			}
			tc.check(t)
		})
	}
	if scopes := tokens.Scopes(); len(scopes) == 0 || scopes[0] != "https://www.googleapis.com/auth/cloud-platform" {
		t.Errorf("scopes asked: %v", scopes)
	}
}

// A Vertex AI judge without credentials or a project is refused before the
// run is stored, exit 3, naming what is missing where LiteLLM reads it.
func TestAJudgeOnVertexAINeedsCredentialsAndAProject(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte(`{"question": "Capital of Italy?", "answer": "Rome"}
`), 0o644)
	cfg := filepath.Join(dir, "run.yaml")
	os.WriteFile(cfg, []byte(`name: vertex-judge
dataset: {path: ./q.jsonl}
agent: {type: openai, model: agent-model, base_url: "http://127.0.0.1:1/v1"}
judge: {model: "vertex_ai/claude-opus-4-5"}
conditions: {plain: {}}
`), 0o644)
	t.Setenv("HOME", dir) // no gcloud credentials
	t.Setenv("GCE_METADATA_HOST", "")
	tokens := googletest.NewTokenServer(t)
	noProject := tokens.ServiceAccountFile(t, t.TempDir(), "")
	for _, tc := range []struct {
		creds, project, want string
	}{
		{"", "", "judge.model: no Google credentials for Vertex AI: set GOOGLE_APPLICATION_CREDENTIALS"},
		{filepath.Join(dir, "missing.json"), "p", "GOOGLE_APPLICATION_CREDENTIALS names"},
		{noProject, "", "judge.model: no Google Cloud project for Vertex AI: set VERTEXAI_PROJECT"},
	} {
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", tc.creds)
		t.Setenv("VERTEXAI_PROJECT", tc.project)
		db := filepath.Join(t.TempDir(), "a.db")
		var errOut bytes.Buffer
		err := run(context.Background(), []string{"run", "--config", cfg, "--db", db, "--quiet"}, &bytes.Buffer{}, &errOut)
		if exitCodeOf(err) != 3 || !strings.Contains(err.Error()+errOut.String(), tc.want) {
			t.Errorf("credentials %q, project %q: exit %d, %v %s; want exit 3 saying %q", tc.creds, tc.project, exitCodeOf(err), err, errOut.String(), tc.want)
		}
		if n := storedRuns(t, db); n != 0 {
			t.Errorf("%d runs stored", n)
		}
	}
}

// storedRuns counts the runs of the database at path; 0 when there is none.
func storedRuns(t *testing.T, path string) int {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	db.QueryRow(`SELECT count(*) FROM runs`).Scan(&n)
	return n
}
