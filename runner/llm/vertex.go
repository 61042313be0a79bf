package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/option"
	"golang.org/x/oauth2"
)

// Vertex reaches a model through Google's Vertex AI, as LiteLLM's
// "vertex_ai/…" models are reached: Claude through Anthropic's publisher
// endpoint (…/publishers/anthropic/models/M:rawPredict, the Messages API's
// body without its model), every other model through Vertex's
// OpenAI-compatible endpoint (…/endpoints/openapi/chat/completions), each
// call with an OAuth token of Tokens.
type Vertex struct {
	Project, Location string
	Tokens            oauth2.TokenSource
}

// vertexAnthropicVersion is the version Anthropic's models on Vertex take
// in the body, where the first-party API takes a header.
const vertexAnthropicVersion = "vertex-2023-10-16"

// vertexBase is Vertex AI's address for a location; a BaseURL set in the
// configuration replaces it (a proxy, a test).
func vertexBase(cfg Config) string {
	if cfg.BaseURL != "" {
		return strings.TrimRight(cfg.BaseURL, "/")
	}
	switch loc := cfg.Vertex.Location; loc {
	case "global":
		return "https://aiplatform.googleapis.com"
	case "us", "eu":
		return "https://aiplatform." + loc + ".rep.googleapis.com"
	default:
		return "https://" + loc + "-aiplatform.googleapis.com"
	}
}

// vertexPath is the path of a location's resources.
func (v *Vertex) path() string {
	return fmt.Sprintf("/v1/projects/%s/locations/%s", v.Project, v.Location)
}

// withTokens is hc with each request authorized by a token of ts.
func withTokens(hc *http.Client, ts oauth2.TokenSource) *http.Client {
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	authed := *hc
	authed.Transport = &oauth2.Transport{Base: base, Source: oauth2.ReuseTokenSource(nil, ts)}
	return &authed
}

// vertexMessages turns the SDK's Messages API request into Anthropic's on
// Vertex: the model moves from the body into the path, and the body names
// the version.
func vertexMessages(v *Vertex) option.Middleware {
	return func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		prefix, ok := strings.CutSuffix(r.URL.Path, "/v1/messages")
		if !ok || r.Method != http.MethodPost || r.Body == nil {
			return nil, fmt.Errorf("vertex: no Vertex AI endpoint for %s %s", r.Method, r.URL.Path)
		}
		raw, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(raw, &body); err != nil {
			return nil, fmt.Errorf("vertex: the request is not JSON: %w", err)
		}
		var model string
		if err := json.Unmarshal(body["model"], &model); err != nil || model == "" {
			return nil, fmt.Errorf("vertex: the request names no model")
		}
		delete(body, "model")
		body["anthropic_version"] = json.RawMessage(`"` + vertexAnthropicVersion + `"`)
		if raw, err = json.Marshal(body); err != nil {
			return nil, err
		}
		r.URL.Path = prefix + v.path() + "/publishers/anthropic/models/" + model + ":rawPredict"
		r.URL.RawPath = ""
		r.Header.Del("X-Api-Key")
		r.Body = io.NopCloser(bytes.NewReader(raw))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
		r.ContentLength = int64(len(raw))
		return next(r)
	}
}
