package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// post sends a chat request body to url and returns status and body; a
// dropped connection comes back as an error.
func post(t *testing.T, url, body string) (int, string, error) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

const hello = `{"model":"m","messages":[{"role":"user","content":"hello there"}],"temperature":0,"seed":7}`

func TestFaultsYieldEveryKind(t *testing.T) {
	srv := New(Text("ok"), WithFaults(0.1, 1))
	defer srv.Close()
	const n = 1000
	for range n {
		status, body, err := post(t, srv.URL, hello)
		if err == nil && status == http.StatusOK && body != MalformedBody {
			var c openai.ChatCompletionResponse
			if err := json.Unmarshal([]byte(body), &c); err != nil || c.Choices[0].Message.Content != "ok" {
				t.Fatalf("healthy answer %q: %v", body, err)
			}
		}
	}
	st := srv.Stats()
	total := 0
	for _, f := range allFaults {
		if st.Faults[f] == 0 {
			t.Errorf("no %s fault in %d requests: %v", f, n, st.Faults)
		}
		total += st.Faults[f]
	}
	if total < n/20 || total > n*3/20 {
		t.Errorf("%d faults in %d requests, want about 10%%", total, n)
	}
	if st.Requests != n || st.Dropped != st.Faults[FaultDrop] || st.Status[429] != st.Faults[FaultRateLimit] ||
		st.Status[500] != st.Faults[FaultServerError] || st.Status[503] != st.Faults[FaultUnavailable] {
		t.Errorf("stats disagree: %+v", st)
	}
	if st.Status[200] != n-total+st.Faults[FaultMalformed] {
		t.Errorf("%d answers with 200, want %d", st.Status[200], n-total+st.Faults[FaultMalformed])
	}
}

func TestServerAnswers(t *testing.T) {
	schemaFormat := `"response_format":{"type":"json_schema","json_schema":{"name":"v","strict":true,` +
		`"schema":{"type":"object","properties":{"score":{"type":"integer","enum":[1,2,3]},"why":{"type":"string"}}}}}`
	tests := []struct {
		name    string
		opts    []Option
		handler Handler
		body    string
		status  int
		want    string // substring of the response body
	}{
		{name: "completion with estimated usage", handler: Text("hi"), body: hello, status: 200, want: `"prompt_tokens":11`},
		{name: "error reply", handler: Script(Reply{Status: 400, Content: "no such model"}), body: hello, status: 400, want: `"message":"no such model"`},
		{name: "json_schema rejected", opts: []Option{WithoutStructuredOutput()}, handler: Text("hi"),
			body: `{"model":"m","messages":[],` + schemaFormat + `}`, status: 400, want: "json_schema"},
		{name: "judge fills the schema", handler: JudgeAndAgent(Judge(map[string]any{"why": "fine"}), Text("agent")),
			body: `{"model":"m","messages":[],` + schemaFormat + `}`, status: 200, want: `{\"score\":3,\"why\":\"fine\"}`},
		{name: "judge reads a schema from the prompt", handler: JudgeAndAgent(Judge(nil), Text("agent")),
			body: `{"model":"m","messages":[{"role":"system","content":"Answer by:\n` + "```json\\n" +
				`{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}}}\n` + "```" + `"}]}`,
			status: 200, want: `\"ok\": true`},
		{name: "agent otherwise", handler: JudgeAndAgent(Judge(nil), Text("agent")), body: hello, status: 200, want: `"content":"agent"`},
		{name: "bad JSON request", handler: Text("hi"), body: `{`, status: 400, want: "decode chat request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(tt.handler, tt.opts...)
			defer srv.Close()
			status, body, err := post(t, srv.URL, tt.body)
			if err != nil || status != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("got %d %s (%v), want %d with %s", status, body, err, tt.status, tt.want)
			}
		})
	}
}

func TestRequestIsDecoded(t *testing.T) {
	srv := New(Text("ok"))
	defer srv.Close()
	if _, _, err := post(t, strings.TrimSuffix(srv.URL, "/v1"), hello); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	if req.Temperature == nil || *req.Temperature != 0 || req.Seed == nil || *req.Seed != 7 ||
		req.LastUser() != "hello there" || req.Path != "/chat/completions" {
		t.Errorf("decoded %+v", req)
	}
}

func TestCloseReleasesHangingRequests(t *testing.T) {
	srv := New(Script(Reply{Hang: true}))
	done := make(chan error, 1)
	go func() {
		_, _, err := post(t, srv.URL, hello)
		done <- err
	}()
	for srv.Stats().Hung == 0 {
		time.Sleep(time.Millisecond)
	}
	srv.Close()
	if err := <-done; err == nil {
		t.Errorf("hanging request got an answer, want a dropped connection")
	}
}

func TestWithoutHistoryKeepsNoRequest(t *testing.T) {
	var seen []int
	srv := New(func(req *ChatRequest) Reply {
		seen = append(seen, req.Index)
		return Reply{Content: "ok"}
	}, WithoutHistory())
	defer srv.Close()
	for range 3 {
		if status, _, err := post(t, srv.URL, hello); err != nil || status != http.StatusOK {
			t.Fatalf("status %d, err %v", status, err)
		}
	}
	if got := srv.Requests(); len(got) != 0 {
		t.Errorf("a server without history kept %d requests", len(got))
	}
	if st := srv.Stats(); st.Requests != 3 || st.Status[200] != 3 {
		t.Errorf("stats %+v, want 3 requests answered", st)
	}
	if len(seen) != 3 || seen[0] != 0 || seen[2] != 2 {
		t.Errorf("requests numbered %v, want 0, 1, 2", seen)
	}
}
