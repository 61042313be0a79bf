package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	openai "github.com/sashabaranov/go-openai"
)

// maxMalformedRetries bounds retries of 2xx answers whose body is not a
// chat completion: a proxy or server that garbles one answer may recover,
// one that garbles three will not.
const maxMalformedRetries = 2

// Request is one chat turn: the conversation so far, the tools the model
// may call and, optionally, the shape its answer must take.
type Request struct {
	Messages       []openai.ChatCompletionMessage
	Tools          []openai.Tool
	ResponseFormat *openai.ChatCompletionResponseFormat
}

// Response is the model's answer and what it cost to get.
type Response struct {
	// Message is the assistant message as returned, tool calls included.
	Message openai.ChatCompletionMessage
	// Content is the visible answer: Raw without a leading <think> block
	// (reasoning models on Ollama or vLLM), trimmed.
	Content string
	// Raw is the message content exactly as returned.
	Raw string
	// FinishReason is why generation stopped, e.g. "stop" or "length".
	FinishReason string
	// TokensIn and TokensOut are the usage the server reported; TokensIn
	// counts prompt-cache reads and writes too, which CacheReadTokens and
	// CacheWriteTokens give apart (an OpenAI-compatible server reports its
	// reads alone, as prompt_tokens_details.cached_tokens).
	TokensIn, TokensOut               int
	CacheReadTokens, CacheWriteTokens int
	// Model is the model that answered, as the server names it.
	Model string
	// Latency is the duration of the attempt that succeeded; time spent
	// on failed attempts and backoff is told by Attempts and Retries.
	Latency time.Duration
	// Attempts counts every attempt, the successful one included.
	Attempts int
	// Retries has one line per failed attempt that was retried.
	Retries []string
	// Batched: the answer came back in a batch (see Batcher), at the
	// batch price.
	Batched bool
}

// Client calls one model at one endpoint: OpenAI-compatible, or the
// Anthropic Messages API when cfg.Provider says so. It is safe for
// concurrent use.
type Client struct {
	cfg     Config
	hc      *http.Client
	chatURL string // OpenAI-compatible: where chat completions are posted
	anth    *anthropic.Client
}

// New returns a client for cfg, with defaults filled in, sending through
// hc (nil: a fresh http.Client). Deadlines come from cfg.CallTimeout, so hc
// needs no Timeout of its own.
func New(cfg Config, hc *http.Client) *Client {
	cfg = withDefaults(cfg)
	if hc == nil {
		hc = &http.Client{Transport: transport}
	}
	if cfg.Vertex != nil {
		hc = withTokens(hc, cfg.Vertex.Tokens)
		cfg.APIKey = ""
	}
	if cfg.Provider == ProviderAnthropic {
		a := newAnthropic(cfg, &doer{hc: hc})
		return &Client{cfg: cfg, anth: &a}
	}
	base := strings.TrimRight(cmp.Or(cfg.BaseURL, defaultOpenAIURL), "/")
	if cfg.Vertex != nil {
		base = vertexBase(cfg) + cfg.Vertex.path() + "/endpoints/openapi"
	}
	return &Client{cfg: cfg, hc: hc, chatURL: base + "/chat/completions"}
}

// transport pools the connections of model and judge calls: it keeps as
// many idle connections to a server as a run has calls in flight, where
// http.DefaultTransport keeps two and dials again for every other call. A
// request is written in one piece: with the default 4 KiB buffer a judge's
// call (a prompt of a few kilobytes and its schema) took two writes, each a
// system call.
var transport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 1024
	t.WriteBufferSize = 16 << 10
	return t
}()

// Model returns the model name sent with every request.
func (c *Client) Model() string { return c.cfg.Model }

// Config returns the configuration in effect, defaults filled in, so the
// parameters actually used can be recorded with a run.
func (c *Client) Config() Config { return c.cfg }

// Chat sends req and returns the first answer, retrying failures that can
// succeed later. A failure is returned as *Error; a cancelled ctx stops
// everything at once.
func (c *Client) Chat(ctx context.Context, req Request) (*Response, error) {
	if b, id := inBatch(ctx); b != nil && c.cfg.Vertex == nil {
		return b.Send(ctx, c, id, req)
	}
	call, err := c.caller(req)
	if err != nil {
		return nil, &Error{Attempts: 0, Message: err.Error(), err: err}
	}
	policy := c.cfg.Retry
	var retries []string
	malformed := 0
	counts, _ := ctx.Value(countsKey{}).(*Counts)
	for n := 1; ; n++ {
		start := time.Now()
		resp, f, err := c.callOnce(ctx, call, counts)
		if err != nil {
			return nil, &Error{Attempts: n - 1, Message: "canceled while waiting for room under the provider's rate limit", err: err}
		}
		if f == nil {
			resp.Latency, resp.Attempts, resp.Retries = time.Since(start), n, retries
			return resp, nil
		}
		if f.malformed {
			malformed++
		}
		if !f.retryable || n >= policy.MaxAttempts || malformed > maxMalformedRetries {
			return nil, f.asError(n)
		}
		d := policy.wait(n, f.header, time.Now())
		retries = append(retries, fmt.Sprintf("attempt %d: %s; retrying in %s", n, f.message, d.Round(time.Millisecond)))
		if err := policy.Sleep(ctx, d); err != nil {
			return nil, &Error{Attempts: n, StatusCode: f.status,
				Message: "canceled while waiting to retry: " + f.message, err: err}
		}
	}
}

// callOnce makes one call, within the provider's rate limit when it has
// one, and counts a 429; err is the context's, ended while waiting for
// room under the limit.
func (c *Client) callOnce(ctx context.Context, call func(context.Context, *attempt) (*Response, *failure), counts *Counts) (*Response, *failure, error) {
	var seen attempt
	var started time.Time
	lim := c.cfg.Limit
	if lim != nil {
		var err error
		if started, err = lim.acquire(ctx); err != nil {
			return nil, nil, err
		}
	}
	resp, f := call(ctx, &seen)
	if lim != nil {
		lim.release(started, seen.status, seen.header)
	}
	if counts != nil && seen.status == http.StatusTooManyRequests {
		counts.RateLimited.Add(1)
	}
	return resp, f, nil
}

// caller returns the function that makes one attempt of req.
func (c *Client) caller(req Request) (func(context.Context, *attempt) (*Response, *failure), error) {
	if c.anth != nil {
		p, err := c.anthropicParams(req)
		structured := req.ResponseFormat != nil && req.ResponseFormat.JSONSchema != nil
		return func(ctx context.Context, seen *attempt) (*Response, *failure) {
			return c.anthropicAttempt(ctx, p, structured, seen)
		}, err
	}
	creq := c.request(req)
	if err := openai.NewReasoningValidator().Validate(creq); err != nil {
		return nil, err
	}
	body, err := encodeChat(&creq, c.cfg.Temperature)
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	return func(ctx context.Context, seen *attempt) (*Response, *failure) {
		resp, f := c.attempt(ctx, body, seen)
		if f != nil {
			return nil, f
		}
		return c.response(resp), nil
	}, nil
}

// attempt makes one call under its own deadline.
func (c *Client) attempt(ctx context.Context, body []byte, seen *attempt) (openai.ChatCompletionResponse, *failure) {
	callCtx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	resp, err := c.openAIPost(callCtx, body, seen)
	if err != nil {
		f := classify(ctx, callCtx, c.cfg.CallTimeout, seen.status, err)
		f.header = seen.header
		return resp, f
	}
	if len(resp.Choices) == 0 {
		return resp, &failure{status: seen.status, retryable: true, malformed: true,
			message: "server sent a completion without choices"}
	}
	return resp, nil
}

// request builds the go-openai request with the pinned parameters.
func (c *Client) request(req Request) openai.ChatCompletionRequest {
	r := openai.ChatCompletionRequest{
		Model:          c.cfg.Model,
		Messages:       req.Messages,
		Tools:          req.Tools,
		ResponseFormat: req.ResponseFormat,
		Seed:           c.cfg.Seed,
	}
	if t := c.cfg.Temperature; t != nil {
		// Set for go-openai's reasoning-model checks; encodeChat writes
		// the exact value, zero included, into the body.
		r.Temperature = float32(*t)
	}
	if c.cfg.MaxTokens > 0 {
		r.MaxTokens = c.cfg.MaxTokens
		// Reasoning models (o1, o3, gpt-5, …) take only max_completion_tokens.
		if errors.Is(openai.NewReasoningValidator().Validate(r), openai.ErrReasoningModelMaxTokensDeprecated) {
			r.MaxTokens, r.MaxCompletionTokens = 0, c.cfg.MaxTokens
		}
	}
	return r
}

// response turns a successful completion into a Response.
func (c *Client) response(resp openai.ChatCompletionResponse) *Response {
	choice := resp.Choices[0]
	cached := 0
	if d := resp.Usage.PromptTokensDetails; d != nil {
		cached = d.CachedTokens
	}
	return &Response{
		CacheReadTokens: cached,
		Message:         choice.Message,
		Content:         visible(choice.Message.Content),
		Raw:             choice.Message.Content,
		FinishReason:    string(choice.FinishReason),
		Model:           resp.Model,
		TokensIn:        resp.Usage.PromptTokens,
		TokensOut:       resp.Usage.CompletionTokens,
	}
}

// visible drops a leading <think>…</think> block and surrounding space.
func visible(content string) string {
	s := strings.TrimSpace(content)
	if strings.HasPrefix(s, "<think>") {
		if end := strings.Index(s, "</think>"); end >= 0 {
			s = strings.TrimSpace(s[end+len("</think>"):])
		}
	}
	return s
}
