package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/llm/internal/wire"
)

// defaultOpenAIURL is the API of an OpenAI-compatible client without a BaseURL.
const defaultOpenAIURL = "https://api.openai.com/v1"

// openAIPost sends one chat completion request and decodes its answer,
// with go-openai's types and its error types, so classify reads a
// failure the same whichever API sent it. The body is written by
// encodeChat rather than by go-openai's client, which marshals every
// message twice (its MarshalJSON, then encoding/json compacting what that
// returned) and cannot send a temperature of 0: a judge's five-kilobyte
// prompt took a sixth of the engine's CPU that way.
func (c *Client) openAIPost(ctx context.Context, body []byte, seen *attempt) (openai.ChatCompletionResponse, error) {
	var out openai.ChatCompletionResponse
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.chatURL, bytes.NewReader(body))
	if err != nil {
		return out, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	seen.status, seen.header = resp.StatusCode, resp.Header
	reply := &boundedBody{ReadCloser: resp.Body, left: MaxReplyBytes}
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusBadRequest {
		return out, errorReply(resp, reply)
	}
	data, err := wire.ReadBody(resp.ContentLength, MaxReplyBytes, reply)
	if err != nil {
		return out, err
	}
	if out, err = decodeCompletion(data); err != nil {
		return out, err
	}
	out.SetHeader(resp.Header)
	return out, nil
}

// decodeCompletion reads a chat completion's body: a live answer's, or a
// batch's output line's.
func decodeCompletion(data []byte) (openai.ChatCompletionResponse, error) {
	var out openai.ChatCompletionResponse
	var w wireCompletion
	if err := json.Unmarshal(data, &w); err != nil {
		if syn, ok := err.(*json.SyntaxError); ok && syn.Offset >= int64(len(data)) {
			return out, io.ErrUnexpectedEOF // the JSON ends early, as a decoder says it
		}
		return out, err
	}
	out.Model, out.Usage.PromptTokens, out.Usage.CompletionTokens = w.Model, w.Usage.PromptTokens, w.Usage.CompletionTokens
	if cached := w.Usage.PromptTokensDetails.CachedTokens; cached > 0 {
		out.Usage.PromptTokensDetails = &openai.PromptTokensDetails{CachedTokens: cached}
	}
	out.Choices = make([]openai.ChatCompletionChoice, len(w.Choices))
	for i, choice := range w.Choices {
		out.Choices[i].Index, out.Choices[i].FinishReason = i, openai.FinishReason(choice.FinishReason)
		var err error
		if out.Choices[i].Message, err = choice.Message.Message(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// wireCompletion is what a chat completion holds that the client reads,
// decoded in one pass (package wire).
type wireCompletion struct {
	Model   string `json:"model"`
	Choices []struct {
		Message      wire.Message `json:"message"`
		FinishReason string       `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		// PromptTokensDetails.CachedTokens is the part of the prompt read
		// from OpenAI's own cache of long prefixes.
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// errorReply reads the body of an error status as go-openai does: an
// *openai.APIError when it is OpenAI's error object, else an
// *openai.RequestError with the body as sent.
func errorReply(resp *http.Response, body io.Reader) error {
	data, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("error, reading response body: %w", err)
	}
	var e openai.ErrorResponse
	err = json.Unmarshal(data, &e)
	if err != nil || e.Error == nil {
		reqErr := &openai.RequestError{HTTPStatus: resp.Status, HTTPStatusCode: resp.StatusCode, Err: err, Body: data}
		if e.Error != nil {
			reqErr.Err = e.Error
		}
		return reqErr
	}
	e.Error.HTTPStatus, e.Error.HTTPStatusCode = resp.Status, resp.StatusCode
	return e.Error
}

// encodeChat writes the JSON body of r, the fields Client.request sets,
// with the temperature exactly as given (go-openai's float32 tagged
// omitempty would turn 0.7 into 0.699999988 and drop 0). A message is
// encoded once through a copy of its type that has no MarshalJSON.
func encodeChat(r *openai.ChatCompletionRequest, temperature *float64) ([]byte, error) {
	b := bytes.NewBuffer(make([]byte, 0, sizeOf(r)))
	b.WriteString(`{"model":`)
	if err := writeJSON(b, r.Model); err != nil {
		return nil, err
	}
	b.WriteString(`,"messages":[`)
	for i := range r.Messages {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeMessage(b, &r.Messages[i]); err != nil {
			return nil, fmt.Errorf("message %d: %w", i+1, err)
		}
	}
	b.WriteByte(']')
	if r.MaxTokens > 0 {
		b.WriteString(`,"max_tokens":` + strconv.Itoa(r.MaxTokens))
	}
	if r.MaxCompletionTokens > 0 {
		b.WriteString(`,"max_completion_tokens":` + strconv.Itoa(r.MaxCompletionTokens))
	}
	if temperature != nil {
		if math.IsNaN(*temperature) || math.IsInf(*temperature, 0) {
			return nil, fmt.Errorf("temperature %v is not a number JSON can carry", *temperature)
		}
		b.WriteString(`,"temperature":` + strconv.FormatFloat(*temperature, 'g', -1, 64))
	}
	b.WriteString(`,"stream":false`)
	if f := r.ResponseFormat; f != nil {
		b.WriteString(`,"response_format":`)
		if err := writeFormat(b, f); err != nil {
			return nil, err
		}
	}
	if r.Seed != nil {
		b.WriteString(`,"seed":` + strconv.Itoa(*r.Seed))
	}
	if len(r.Tools) > 0 {
		b.WriteString(`,"tools":`)
		if err := writeJSON(b, r.Tools); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// sizeOf is about the size of r's body, so that its buffer is made once
// (grown by doubling from a few hundred bytes, it was a seventh of the
// engine's allocations): the texts with room for escapes, the rest guessed.
func sizeOf(r *openai.ChatCompletionRequest) int {
	n := 512 + len(r.Model)
	for i := range r.Messages {
		n += 128 + len(r.Messages[i].Content)*9/8
	}
	if f := r.ResponseFormat; f != nil && f.JSONSchema != nil {
		switch s := f.JSONSchema.Schema.(type) {
		case Schema:
			n += len(s.raw)
		case json.RawMessage:
			n += len(s)
		}
	}
	return n
}

// textMessage and partsMessage are openai.ChatCompletionMessage as its
// MarshalJSON writes it, with a string content or with content parts. A
// field added to the library's type stops the conversions from compiling.
type textMessage struct {
	Role             string                   `json:"role"`
	Content          string                   `json:"content,omitempty"`
	Refusal          string                   `json:"refusal,omitempty"`
	MultiContent     []openai.ChatMessagePart `json:"-"`
	Name             string                   `json:"name,omitempty"`
	ReasoningContent string                   `json:"reasoning_content,omitempty"`
	FunctionCall     *openai.FunctionCall     `json:"function_call,omitempty"`
	ToolCalls        []openai.ToolCall        `json:"tool_calls,omitempty"`
	ToolCallID       string                   `json:"tool_call_id,omitempty"`
}

type partsMessage struct {
	Role             string                   `json:"role"`
	Content          string                   `json:"-"`
	Refusal          string                   `json:"refusal,omitempty"`
	MultiContent     []openai.ChatMessagePart `json:"content,omitempty"`
	Name             string                   `json:"name,omitempty"`
	ReasoningContent string                   `json:"reasoning_content,omitempty"`
	FunctionCall     *openai.FunctionCall     `json:"function_call,omitempty"`
	ToolCalls        []openai.ToolCall        `json:"tool_calls,omitempty"`
	ToolCallID       string                   `json:"tool_call_id,omitempty"`
}

func writeMessage(b *bytes.Buffer, m *openai.ChatCompletionMessage) error {
	switch {
	case m.Content != "" && m.MultiContent != nil:
		return openai.ErrContentFieldsMisused
	case len(m.MultiContent) > 0:
		return writeJSON(b, partsMessage(*m))
	case m.Refusal == "" && m.ReasoningContent == "" && m.FunctionCall == nil && len(m.ToolCalls) == 0:
		writeTextMessage(b, m)
		return nil
	}
	return writeJSON(b, textMessage(*m))
}

// writeTextMessage writes a message of text alone (the prompts, and most
// answers sent back) as textMessage's encoding does, field by field, without
// encoding/json's reflection over the type or the copy its Encoder makes
// of a prompt.
func writeTextMessage(b *bytes.Buffer, m *openai.ChatCompletionMessage) {
	out := b.AvailableBuffer()
	out = append(out, `{"role":`...)
	out = wire.AppendString(out, m.Role)
	for _, f := range [...]struct{ key, value string }{{`,"content":`, m.Content}, {`,"name":`, m.Name}, {`,"tool_call_id":`, m.ToolCallID}} {
		if f.value != "" {
			out = wire.AppendString(append(out, f.key...), f.value)
		}
	}
	b.Write(append(out, '}'))
}

// Schema is a JSON Schema checked and made compact once (NewSchema): a
// request writes it as it is. A judge sends the same schema with every
// call.
type Schema struct{ raw json.RawMessage }

// NewSchema checks a schema written as JSON and makes it compact.
func NewSchema(raw []byte) (Schema, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return Schema{}, fmt.Errorf("schema: %w", err)
	}
	return Schema{raw: b.Bytes()}, nil
}

// MarshalJSON writes the schema as NewSchema made it.
func (s Schema) MarshalJSON() ([]byte, error) {
	if s.raw == nil {
		return []byte("null"), nil
	}
	return s.raw, nil
}

// writeFormat writes a response format; a Schema, or a schema given as
// valid json.RawMessage, is written as it is.
func writeFormat(b *bytes.Buffer, f *openai.ChatCompletionResponseFormat) error {
	s := f.JSONSchema
	var raw json.RawMessage
	ok := false
	if s != nil {
		switch v := s.Schema.(type) {
		case Schema:
			raw, ok = v.raw, v.raw != nil
		case json.RawMessage:
			raw, ok = v, json.Valid(v)
		}
	}
	if !ok {
		return writeJSON(b, f)
	}
	b.WriteByte('{')
	if f.Type != "" {
		b.WriteString(`"type":`)
		if err := writeJSON(b, f.Type); err != nil {
			return err
		}
		b.WriteByte(',')
	}
	b.WriteString(`"json_schema":{"name":`)
	if err := writeJSON(b, s.Name); err != nil {
		return err
	}
	if s.Description != "" {
		b.WriteString(`,"description":`)
		if err := writeJSON(b, s.Description); err != nil {
			return err
		}
	}
	b.WriteString(`,"schema":`)
	b.Write(raw)
	b.WriteString(`,"strict":` + strconv.FormatBool(s.Strict) + `}}`)
	return nil
}

// writeJSON appends v as json.Marshal writes it, without a copy of its own.
func writeJSON(b *bytes.Buffer, v any) error {
	if err := json.NewEncoder(b).Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // the newline Encode ends with
	return nil
}
