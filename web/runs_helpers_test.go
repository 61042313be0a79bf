package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"assay"
	"assay/internal/pgtest"
	"assay/runner"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
	"assay/web"
)

// runFixture is a server whose runs call a fake OpenAI-compatible server.
type runFixture struct {
	*browser
	db   *store.DB
	fake *llmtest.Server
}

// newRunServer serves a new database whose runs call the fake model h. The
// server may start command agents unless an option says otherwise.
func newRunServer(t *testing.T, h llmtest.Handler, options ...func(*web.Config)) *runFixture {
	t.Helper()
	return newRunServerOn(t, llmtest.New(h), options...)
}

// newRunServerOn is newRunServer with a fake model server of the test's.
func newRunServerOn(t *testing.T, fake *llmtest.Server, options ...func(*web.Config)) *runFixture {
	t.Helper()
	db, err := tally.Open(context.Background(), pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := runner.New(db, runner.Options{Logger: logger,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	cfg := web.Config{Logger: logger, Runner: m, AllowCommandAgents: true}
	for _, o := range options {
		o(&cfg)
	}
	s, err := web.New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); m.Close(context.Background()); fake.Close(); db.Close() })
	jar, _ := cookiejar.New(nil)
	return &runFixture{browser: &browser{t: t, srv: srv, http: &http.Client{Jar: jar}}, db: db, fake: fake}
}

// rubricAgent answers every question the same way and judges 4, 5, 3.
func rubricAgent(answer string) llmtest.Handler {
	return llmtest.JudgeAndAgent(llmtest.Judge(map[string]any{"factual_adherence": 4, "completeness": 5,
		"helpfulness_and_clarity": 3, "unverified_claims": []string{}}), llmtest.Text(answer))
}

// qaDataset uploads n question/answer samples and returns the dataset's id.
func (f *runFixture) qaDataset(n int) int64 {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "{\"id\": \"q%d\", \"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, i, 2*i)
	}
	return f.dataset("qa.jsonl", b.String())
}

func (f *runFixture) dataset(name, data string) int64 {
	f.t.Helper()
	f.get("/datasets")
	resp, _ := f.upload(name, []byte(data), nil)
	id, err := strconv.ParseInt(strings.TrimPrefix(resp.Request.URL.Path, "/datasets/"), 10, 64)
	if err != nil {
		f.t.Fatalf("upload of %s ended at %s", name, resp.Request.URL)
	}
	return id
}

// conditions stores conditions by name and returns their ids as the form sends them.
func (f *runFixture) conditions(names ...string) []string {
	f.t.Helper()
	var ids []string
	for _, n := range names {
		c := &assay.Condition{Name: n, SystemPrompt: "Answer briefly.", MCPServers: []assay.MCPServer{}}
		if err := f.db.CreateCondition(context.Background(), c); err != nil {
			f.t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(c.ID, 10))
	}
	return ids
}

// runForm is a complete new run form whose agent and judge are the fake server.
func (f *runFixture) runForm(dataset int64, conditions []string) url.Values {
	return url.Values{"dataset": {strconv.FormatInt(dataset, 10)}, "condition": conditions,
		"evaluator": {"rubric"}, "repetitions": {"3"}, "concurrency": {"4"},
		"agent_base_url": {f.fake.URL}, "agent_model": {"agent-model"}, "agent_key_env": {""},
		"judge_base_url": {f.fake.URL}, "judge_model": {"judge-model"}, "judge_key_env": {""},
		"judge_temperature": {"0"}, "judge_seed": {"42"}, "judge_sample_rate": {"1"}, "judge_repetitions": {"1"}}
}

// launch posts the form and returns the id of the run it shows.
func (f *runFixture) launch(form url.Values) int64 {
	f.t.Helper()
	f.get("/runs/new")
	resp, doc := f.postForm("/runs", form)
	id, err := strconv.ParseInt(strings.TrimPrefix(resp.Request.URL.Path, "/runs/"), 10, 64)
	if err != nil {
		f.t.Fatalf("launch ended at %s (%d): %q", resp.Request.URL, resp.StatusCode, text(doc, "#form-error"))
	}
	return id
}

// launchRun starts a run through the API — stored conditions by name, the
// rest of the run file as JSON — and waits for it to complete.
func (f *runFixture) launchRun(dataset int64, conditions []string, run map[string]any) int64 {
	f.t.Helper()
	code, body := api(f.t, f.browser, "POST", "/api/runs", "", map[string]any{"dataset_id": dataset, "conditions": conditions, "run": run})
	if code != 201 {
		f.t.Fatalf("launch: %d %s", code, body)
	}
	var launched struct {
		RunID int64 `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(body), &launched); err != nil {
		f.t.Fatal(err)
	}
	f.waitFor(launched.RunID, store.RunCompleted)
	return launched.RunID
}

// waitFor polls the run until its status is one of want, within a generous deadline.
func (f *runFixture) waitFor(id int64, want ...store.RunStatus) *store.Run {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		run, err := f.db.Run(context.Background(), id)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, st := range want {
			if run.Status == st {
				return run
			}
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("run %d is %s (%s), want %v", id, run.Status, run.Message, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// getJSON fetches an API path and decodes its body into v.
func (f *runFixture) getJSON(path string, v any) *http.Response {
	f.t.Helper()
	resp, err := f.http.Get(f.srv.URL + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		f.t.Fatalf("GET %s: %d: %v", path, resp.StatusCode, err)
	}
	return resp
}
