package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// Anthropic's Message Batches: the requests go in one POST
// /v1/messages/batches, each named by a custom_id of at most 64 letters,
// digits, '-' and '_' — a line's place ("l12"), which Batch.Lines maps
// back to its id; the batch is polled until its processing ends, and its
// results read as JSONL, each succeeded, errored, canceled or expired.

// submitMessageBatch makes a message batch of lines.
func (c *Client) submitMessageBatch(ctx context.Context, lines []BatchLine) (*Batch, error) {
	var body bytes.Buffer
	body.WriteString(`{"requests":[`)
	ids := make([]string, len(lines))
	for i, l := range lines {
		lc := l.Client
		if lc == nil {
			lc = c
		}
		p, err := lc.anthropicParams(l.Req)
		if err != nil {
			return nil, fmt.Errorf("batch line %s: %w", l.ID, err)
		}
		params, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("batch line %s: %w", l.ID, err)
		}
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"custom_id":"l%d","params":`, i)
		body.Write(params)
		body.WriteByte('}')
		ids[i] = l.ID
	}
	body.WriteString(`]}`)
	var mb anthropic.MessageBatch
	if err := c.anth.Post(ctx, "v1/messages/batches", nil, &mb, option.WithRequestBody("application/json", body.Bytes())); err != nil {
		return nil, fmt.Errorf("create the message batch: %w", err)
	}
	b := messageBatch(&mb)
	b.Lines = ids
	return b, nil
}

// pollMessageBatch describes a message batch as it stands.
func (c *Client) pollMessageBatch(ctx context.Context, id string) (*Batch, error) {
	mb, err := c.anth.Messages.Batches.Get(ctx, id, anthropic.MessageBatchGetParams{})
	if err != nil {
		return nil, fmt.Errorf("poll batch %s: %w", id, err)
	}
	return messageBatch(mb), nil
}

// messageBatch is a message batch in the words of OpenAI's batches: its
// processing in_progress, cancelling, or ended as completed or cancelled.
func messageBatch(mb *anthropic.MessageBatch) *Batch {
	b := &Batch{ID: mb.ID, Status: "in_progress"}
	switch mb.ProcessingStatus {
	case anthropic.MessageBatchProcessingStatusCanceling:
		b.Status = "cancelling"
	case anthropic.MessageBatchProcessingStatusEnded:
		b.Status = "completed"
		if !mb.CancelInitiatedAt.IsZero() {
			b.Status = "cancelled"
		}
	}
	n := mb.RequestCounts
	b.Counts.Completed = int(n.Succeeded)
	b.Counts.Failed = int(n.Errored + n.Canceled + n.Expired)
	b.Counts.Total = b.Counts.Completed + b.Counts.Failed + int(n.Processing)
	return b
}

// messageBatchResults reads an ended message batch's results, each named
// by its line's id (b.Lines).
func (c *Client) messageBatchResults(ctx context.Context, b *Batch) ([]BatchResult, error) {
	stream := c.anth.Messages.Batches.ResultsStreaming(ctx, b.ID, anthropic.MessageBatchResultsParams{})
	defer stream.Close()
	var out []BatchResult
	for stream.Next() {
		r := stream.Current()
		res := BatchResult{ID: r.CustomID}
		if i, err := strconv.Atoi(strings.TrimPrefix(r.CustomID, "l")); err == nil && i >= 0 && i < len(b.Lines) {
			res.ID = b.Lines[i]
		}
		switch r.Result.Type {
		case "succeeded":
			msg := r.Result.Message
			structured := false
			for _, block := range msg.Content {
				structured = structured || block.Type == "tool_use" && block.Name == answerTool
			}
			resp := anthropicResponse(&msg, structured)
			resp.Attempts, resp.Batched = 1, true
			res.Resp = resp
		case "errored":
			res.Err = &Error{Attempts: 1, Message: "the batch request errored: " + snippet(ctx, r.Result.Error.RawJSON())}
		default:
			res.Err = &Error{Attempts: 1, Message: "the batch request was " + r.Result.Type}
		}
		out = append(out, res)
	}
	if err := stream.Err(); err != nil {
		return nil, fmt.Errorf("read batch %s's results: %w", b.ID, err)
	}
	return out, nil
}
