package anthropictest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// The fake's Message Batches, as Anthropic's: POST /v1/messages/batches
// ({"requests": [{"custom_id", "params"}]}), GET /v1/messages/batches/{id},
// POST /v1/messages/batches/{id}/cancel and GET
// /v1/messages/batches/{id}/results (JSONL). A batch is in progress until
// its BatchPolls-th poll (2 unless set), then each request is answered by
// the handler (InBatch set on it): a reply of status 400 or more is an
// errored result, the others succeeded; results come back shuffled.

// batch is one message batch and its requests.
type batch struct {
	id, status string
	requests   []batchRequest
	results    [][]byte
	polls      int
	cancelled  bool
}

type batchRequest struct {
	CustomID string          `json:"custom_id"`
	Params   json.RawMessage `json:"params"`
}

// SetBatchPolls makes a batch end at its n-th poll.
func (s *Server) SetBatchPolls(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batchPolls = n
}

func (s *Server) serveBatch(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1/messages/batches")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.batches == nil {
		s.batches = map[string]*batch{}
	}
	id, action, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	b := s.batches[id]
	switch {
	case r.Method == http.MethodPost && path == "":
		s.createBatch(w, r)
	case b == nil:
		s.batchFail(w, http.StatusNotFound, "no such batch")
	case r.Method == http.MethodGet && action == "":
		s.advance(b)
		s.batchReply(w, b.json())
	case r.Method == http.MethodPost && action == "cancel":
		if b.status == "in_progress" {
			b.status, b.cancelled = "canceling", true
		}
		s.batchReply(w, b.json())
	case r.Method == http.MethodGet && action == "results" && b.status == "ended":
		w.Header().Set("Content-Type", "application/x-jsonl")
		w.WriteHeader(http.StatusOK)
		s.stats.Status[http.StatusOK]++
		w.Write(bytes.Join(b.results, []byte("\n")))
	default:
		s.batchFail(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
	}
}

// createBatch takes a batch of requests, each with a custom id as the
// Message Batches API allows them.
func (s *Server) createBatch(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Requests []batchRequest `json:"requests"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &in); err != nil || len(in.Requests) == 0 {
		s.batchFail(w, http.StatusBadRequest, "want {\"requests\": [{\"custom_id\", \"params\"}, …]}")
		return
	}
	for _, req := range in.Requests {
		if !customID.MatchString(req.CustomID) {
			s.batchFail(w, http.StatusBadRequest, fmt.Sprintf("custom_id %q: must match ^[a-zA-Z0-9_-]{1,64}$", req.CustomID))
			return
		}
	}
	b := &batch{id: fmt.Sprintf("msgbatch_%03d", len(s.batches)+1), status: "in_progress", requests: in.Requests}
	s.batches[b.id] = b
	s.stats.Batches++
	s.batchReply(w, b.json())
}

// batchReply answers v, counting the answer.
func (s *Server) batchReply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	s.stats.Status[http.StatusOK]++
	json.NewEncoder(w).Encode(v)
}

// batchFail answers an error as the API does, counting it.
func (s *Server) batchFail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	s.stats.Status[code]++
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": errorType(code), "message": msg}})
}

// advance moves a polled batch on; at its end each request is answered.
// Called with s.mu held.
func (s *Server) advance(b *batch) {
	if b.status == "ended" {
		return
	}
	b.polls++
	if s.holdBatches && !b.cancelled {
		return
	}
	polls := s.batchPolls
	if polls <= 0 {
		polls = 2
	}
	if b.polls < polls && !b.cancelled {
		return
	}
	for i, br := range b.requests {
		var line map[string]any
		if b.cancelled {
			line = map[string]any{"custom_id": br.CustomID, "result": map[string]any{"type": "canceled"}}
		} else {
			req := &Request{Header: http.Header{}, Body: br.Params, InBatch: true, CustomID: br.CustomID}
			json.Unmarshal(br.Params, req)
			req.Index = len(s.requests) + i
			s.stats.BatchLines++
			s.mu.Unlock() // the handler may take the server's counters
			rep := s.handler(req)
			s.mu.Lock()
			if rep.Status >= 400 {
				line = map[string]any{"custom_id": br.CustomID, "result": map[string]any{"type": "errored",
					"error": map[string]any{"type": "error", "error": map[string]any{"type": errorType(rep.Status), "message": rep.Text}}}}
			} else {
				line = map[string]any{"custom_id": br.CustomID, "result": map[string]any{"type": "succeeded", "message": message(req, rep)}}
			}
		}
		out, _ := json.Marshal(line)
		b.results = append(b.results, out)
	}
	rand.Shuffle(len(b.results), func(i, j int) { b.results[i], b.results[j] = b.results[j], b.results[i] })
	b.status = "ended"
}

func (b *batch) json() map[string]any {
	counts := map[string]int{"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
	if b.status != "ended" {
		counts["processing"] = len(b.requests)
	} else {
		for _, r := range b.results {
			var l struct {
				Result struct {
					Type string `json:"type"`
				} `json:"result"`
			}
			json.Unmarshal(r, &l)
			counts[l.Result.Type]++
		}
	}
	out := map[string]any{"id": b.id, "type": "message_batch", "processing_status": b.status, "request_counts": counts,
		"created_at": time.Now().UTC().Format(time.RFC3339), "expires_at": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339),
		"results_url": nil}
	if b.status == "ended" {
		out["results_url"] = "/v1/messages/batches/" + b.id + "/results"
	}
	if b.cancelled {
		out["cancel_initiated_at"] = time.Now().UTC().Format(time.RFC3339)
	}
	return out
}
