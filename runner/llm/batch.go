package llm

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/anthropics/anthropic-sdk-go"
	openai "github.com/sashabaranov/go-openai"
)

// Batches go through OpenAI's Batch API, at about half the price of live
// calls: the requests are uploaded as a JSONL file (/v1/files, purpose
// batch), a batch is made of it (/v1/batches), polled until it ends, and
// its output file read, each line matched to its request by custom_id.
// Lines come back in any order, and some may fail while others succeed.
// An Anthropic client sends them as a message batch (batch_anthropic.go).

// BatchLine is one request of a batch, named by an id unique in it.
type BatchLine struct {
	ID  string
	Req Request
	// Client writes the line's body as its live call would be sent (its
	// seed, its temperature); nil: the client submitting the batch.
	Client *Client
}

// Batch is a batch as the provider last described it.
type Batch struct {
	ID     string `json:"id"`
	Status string `json:"status"` // validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled
	// OutputFile holds the lines that were answered; ErrorFile those that failed.
	OutputFile string `json:"output_file_id"`
	ErrorFile  string `json:"error_file_id"`
	Counts     struct {
		Total     int `json:"total"`
		Completed int `json:"completed"`
		Failed    int `json:"failed"`
	} `json:"request_counts"`
	// Lines are the lines' ids in the order they were sent: Anthropic's
	// results name a line by its place, its ids being narrower than ours.
	Lines []string `json:"-"`
}

// Ended reports whether the batch will change no more.
func (b *Batch) Ended() bool {
	switch b.Status {
	case "completed", "failed", "expired", "cancelled":
		return true
	}
	return false
}

// BatchResult is one line's outcome: a response, or the error it met.
type BatchResult struct {
	ID   string
	Resp *Response
	Err  *Error
}

// SubmitBatch uploads lines and makes a batch of them, to end within
// window ("24h"). Its id should be kept at once: polling it again after a
// crash costs nothing, submitting the lines again costs them twice.
func (c *Client) SubmitBatch(ctx context.Context, lines []BatchLine, window string) (*Batch, error) {
	if c.anth != nil {
		return c.submitMessageBatch(ctx, lines)
	}
	var file bytes.Buffer
	for _, l := range lines {
		lc := l.Client
		if lc == nil {
			lc = c
		}
		body, err := lc.batchBody(l.Req)
		if err != nil {
			return nil, fmt.Errorf("batch line %s: %w", l.ID, err)
		}
		// The body is JSON already: written as it is, not read again by
		// a marshaller that would check and compact every byte of it.
		id, err := json.Marshal(l.ID)
		if err != nil {
			return nil, err
		}
		file.WriteString(`{"custom_id":`)
		file.Write(id)
		file.WriteString(`,"method":"POST","url":"/v1/chat/completions","body":`)
		file.Write(body)
		file.WriteString("}\n")
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("purpose", "batch")
	part, _ := mw.CreateFormFile("file", "batch.jsonl")
	part.Write(file.Bytes())
	mw.Close()
	var uploaded struct {
		ID string `json:"id"`
	}
	if err := c.batchCall(ctx, http.MethodPost, "/files", mw.FormDataContentType(), &form, &uploaded); err != nil {
		return nil, fmt.Errorf("upload the batch file: %w", err)
	}
	req, _ := json.Marshal(map[string]string{"input_file_id": uploaded.ID, "endpoint": "/v1/chat/completions", "completion_window": window})
	var b Batch
	if err := c.batchCall(ctx, http.MethodPost, "/batches", "application/json", bytes.NewReader(req), &b); err != nil {
		return nil, fmt.Errorf("create the batch: %w", err)
	}
	return &b, nil
}

// PollBatch describes a batch as it stands.
func (c *Client) PollBatch(ctx context.Context, id string) (*Batch, error) {
	if c.anth != nil {
		return c.pollMessageBatch(ctx, id)
	}
	var b Batch
	if err := c.batchCall(ctx, http.MethodGet, "/batches/"+id, "", nil, &b); err != nil {
		return nil, fmt.Errorf("poll batch %s: %w", id, err)
	}
	return &b, nil
}

// CancelBatch asks the provider to stop a batch; lines already answered
// are still in its output.
func (c *Client) CancelBatch(ctx context.Context, id string) error {
	if c.anth != nil {
		if _, err := c.anth.Messages.Batches.Cancel(ctx, id, anthropic.MessageBatchCancelParams{}); err != nil {
			return fmt.Errorf("cancel batch %s: %w", id, err)
		}
		return nil
	}
	if err := c.batchCall(ctx, http.MethodPost, "/batches/"+id+"/cancel", "application/json", nil, nil); err != nil {
		return fmt.Errorf("cancel batch %s: %w", id, err)
	}
	return nil
}

// BatchResults reads an ended batch's output and error files: a result
// per line they hold, in the files' order (not the requests').
func (c *Client) BatchResults(ctx context.Context, b *Batch) ([]BatchResult, error) {
	if c.anth != nil {
		return c.messageBatchResults(ctx, b)
	}
	var out []BatchResult
	for _, file := range []string{b.OutputFile, b.ErrorFile} {
		if file == "" {
			continue
		}
		var data bytes.Buffer
		if err := c.batchCall(ctx, http.MethodGet, "/files/"+file+"/content", "", nil, &data); err != nil {
			return nil, fmt.Errorf("read batch %s's file %s: %w", b.ID, file, err)
		}
		sc := bufio.NewScanner(&data)
		sc.Buffer(make([]byte, 0, 64<<10), MaxReplyBytes)
		for n := 1; sc.Scan(); n++ {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			out = append(out, c.batchResult(ctx, sc.Bytes(), n))
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read batch %s's file %s: %w", b.ID, file, err)
		}
	}
	return out, nil
}

// batchResult reads one output or error line.
func (c *Client) batchResult(ctx context.Context, line []byte, n int) BatchResult {
	var l struct {
		CustomID string `json:"custom_id"`
		Response *struct {
			StatusCode int             `json:"status_code"`
			Body       json.RawMessage `json:"body"`
		} `json:"response"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return BatchResult{Err: &Error{Attempts: 1, Message: fmt.Sprintf("line %d of the batch's output is not JSON: %v", n, err), err: err}}
	}
	r := BatchResult{ID: l.CustomID}
	switch {
	case l.Error != nil:
		r.Err = &Error{Attempts: 1, Message: strings.TrimSpace(l.Error.Code + ": " + l.Error.Message)}
	case l.Response == nil:
		r.Err = &Error{Attempts: 1, Message: "the batch line has neither a response nor an error"}
	case l.Response.StatusCode < 200 || l.Response.StatusCode >= 300:
		r.Err = &Error{Attempts: 1, StatusCode: l.Response.StatusCode, Message: fmt.Sprintf("status %d: %s", l.Response.StatusCode, snippet(ctx, string(l.Response.Body)))}
	default:
		resp, err := decodeCompletion(l.Response.Body)
		if err == nil && len(resp.Choices) == 0 {
			err = fmt.Errorf("a completion without choices")
		}
		if err != nil {
			r.Err = &Error{Attempts: 1, StatusCode: l.Response.StatusCode, Message: "the batch line's body is not a chat completion: " + err.Error(), err: err}
			break
		}
		out := c.response(resp)
		out.Attempts, out.Batched = 1, true
		r.Resp = out
	}
	return r
}

// batchBody is the chat request's body, as a live call would send it.
func (c *Client) batchBody(req Request) ([]byte, error) {
	creq := c.request(req)
	if err := openai.NewReasoningValidator().Validate(creq); err != nil {
		return nil, err
	}
	return encodeChat(&creq, c.cfg.Temperature)
}

// batchCall makes one call of the Batch or Files API and decodes its JSON
// answer into out (an *bytes.Buffer takes the body as it is; nil: none).
func (c *Client) batchCall(ctx context.Context, method, path, contentType string, body io.Reader, out any) error {
	base := strings.TrimSuffix(c.chatURL, "/chat/completions")
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	reply := &boundedBody{ReadCloser: resp.Body, left: 512 << 20}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return errorReply(resp, reply)
	}
	switch o := out.(type) {
	case nil:
		_, err = io.Copy(io.Discard, reply)
	case *bytes.Buffer:
		_, err = o.ReadFrom(reply)
	default:
		err = json.NewDecoder(reply).Decode(out)
	}
	return err
}

// Batcher sends a chat call as a line of a batch, named id, and returns
// its answer once the batch has it. A line the batch could not answer is
// the Batcher's to call live (Live) or send again.
type Batcher interface {
	Send(ctx context.Context, c *Client, id string, req Request) (*Response, error)
}

type batchKey struct{}

// batchCalls names the calls made with one context: its id, then #1, #2…
// in the order they are made.
type batchCalls struct {
	b  Batcher
	id string
	n  atomic.Int32
}

// InBatch makes the OpenAI-compatible calls made with ctx go through b,
// each a line named id#1, id#2… in the order they are made: a judge's
// protocol, which asks again when an answer is malformed, names its
// calls alike when it is run again from the same answers.
func InBatch(ctx context.Context, b Batcher, id string) context.Context {
	return context.WithValue(ctx, batchKey{}, &batchCalls{b: b, id: id})
}

// Live makes the calls made with ctx go live, whatever InBatch said.
func Live(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchKey{}, (*batchCalls)(nil))
}

func inBatch(ctx context.Context) (Batcher, string) {
	bc, _ := ctx.Value(batchKey{}).(*batchCalls)
	if bc == nil {
		return nil, ""
	}
	return bc.b, fmt.Sprintf("%s#%d", bc.id, bc.n.Add(1))
}

// Provider names the API a client's batches go to: openai or anthropic.
func (c *Client) Provider() string {
	if c.anth != nil {
		return "anthropic"
	}
	return "openai"
}

// Endpoint names where a client's calls go and for which model: the calls
// of one batch share it.
func (c *Client) Endpoint() string {
	if c.anth != nil {
		return cmp.Or(c.cfg.BaseURL, "https://api.anthropic.com") + " " + c.cfg.Model
	}
	return c.chatURL + " " + c.cfg.Model
}

// Refused reports whether err is a batch API's refusal that asking again
// will not change — the batch or file is unknown to it, the key is not
// allowed — rather than a passing fault (a 429, a 5xx, a lost connection).
func Refused(err error) bool {
	status := 0
	var oe *openai.APIError
	var re *openai.RequestError
	var ae *anthropic.Error
	switch {
	case errors.As(err, &oe):
		status = oe.HTTPStatusCode
	case errors.As(err, &re):
		status = re.HTTPStatusCode
	case errors.As(err, &ae):
		status = ae.StatusCode
	}
	return status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout
}
