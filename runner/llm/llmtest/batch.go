package llmtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The fake's Batch API, as OpenAI's: POST /v1/files (multipart, purpose
// batch), POST /v1/batches, GET /v1/batches/{id}, POST
// /v1/batches/{id}/cancel, GET /v1/files/{id}/content. A batch is
// validating, then in progress, and ends after WithBatchPolls polls (2 by
// default): each line is answered then by the server's handler, answers
// of status 400 and above go to the error file, and both files' lines are
// shuffled.

// WithBatchPolls makes a batch end at its n-th poll.
func WithBatchPolls(n int) Option {
	return func(o *options) { o.batchPolls = n }
}

// HoldBatches keeps every batch in progress, however often it is polled,
// until it is called again with false: a test's process can die while a
// batch is under way.
func (s *Server) HoldBatches(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdBatches = hold
}

type fakeBatch struct {
	ID, Status, Input, Output, Errors string
	polls                             int
	Total, Completed, Failed          int
}

func (b *fakeBatch) json() map[string]any {
	return map[string]any{"id": b.ID, "object": "batch", "status": b.Status, "input_file_id": b.Input,
		"output_file_id": b.Output, "error_file_id": b.Errors,
		"request_counts": map[string]int{"total": b.Total, "completed": b.Completed, "failed": b.Failed}}
}

func (s *Server) serveBatch(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files, s.batches = map[string][]byte{}, map[string]*fakeBatch{}
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case r.Method == http.MethodPost && path == "/files":
		s.uploadFile(w, r)
	case r.Method == http.MethodPost && path == "/batches":
		s.createBatch(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/batches/"):
		s.pollBatch(w, strings.TrimPrefix(path, "/batches/"))
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/batches/") && strings.HasSuffix(path, "/cancel"):
		s.cancelBatch(w, strings.TrimSuffix(strings.TrimPrefix(path, "/batches/"), "/cancel"))
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/files/") && strings.HasSuffix(path, "/content"):
		s.fileContent(w, strings.TrimSuffix(strings.TrimPrefix(path, "/files/"), "/content"))
	default:
		batchFail(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
	}
}

// pollBatch answers a batch's status, moving it along first.
func (s *Server) pollBatch(w http.ResponseWriter, id string) {
	b := s.batches[id]
	if b == nil {
		batchFail(w, http.StatusNotFound, "no such batch")
		return
	}
	s.advance(b)
	batchReply(w, http.StatusOK, b.json())
}

// cancelBatch cancels a batch not yet ended.
func (s *Server) cancelBatch(w http.ResponseWriter, id string) {
	b := s.batches[id]
	if b == nil {
		batchFail(w, http.StatusNotFound, "no such batch")
		return
	}
	if !strings.HasPrefix(b.Status, "c") && b.Status != "failed" {
		b.Status = "cancelled"
	}
	batchReply(w, http.StatusOK, b.json())
}

// fileContent answers a file's lines.
func (s *Server) fileContent(w http.ResponseWriter, id string) {
	data, ok := s.files[id]
	if !ok {
		batchFail(w, http.StatusNotFound, "no such file")
		return
	}
	w.Header().Set("Content-Type", "application/jsonl")
	w.Write(data)
}

// uploadFile keeps a batch's input file. Called with s.mu held.
func (s *Server) uploadFile(w http.ResponseWriter, r *http.Request) {
	f, _, err := r.FormFile("file")
	if err != nil || r.FormValue("purpose") != "batch" {
		batchFail(w, http.StatusBadRequest, "want a multipart file with purpose batch")
		return
	}
	data, _ := io.ReadAll(f)
	id := fmt.Sprintf("file-%d", len(s.files)+1)
	s.files[id] = data
	batchReply(w, http.StatusOK, map[string]any{"id": id, "object": "file", "purpose": "batch", "bytes": len(data)})
}

// createBatch makes a batch of an uploaded file. Called with s.mu held.
func (s *Server) createBatch(w http.ResponseWriter, r *http.Request) {
	var in struct {
		InputFileID string `json:"input_file_id"`
		Endpoint    string `json:"endpoint"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || s.files[in.InputFileID] == nil || in.Endpoint != "/v1/chat/completions" {
		batchFail(w, http.StatusBadRequest, "want an uploaded input_file_id and endpoint /v1/chat/completions")
		return
	}
	b := &fakeBatch{ID: fmt.Sprintf("batch_%d", len(s.batches)+1), Status: "validating", Input: in.InputFileID,
		Total: bytes.Count(s.files[in.InputFileID], []byte("\n"))}
	s.batches[b.ID] = b
	s.stats.Batches++
	batchReply(w, http.StatusOK, b.json())
}

func batchReply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func batchFail(w http.ResponseWriter, code int, msg string) {
	batchReply(w, code, map[string]any{"error": map[string]string{"message": msg, "type": "invalid_request_error"}})
}

// advance moves a polled batch on; at its end each line is answered.
// Called with s.mu held.
func (s *Server) advance(b *fakeBatch) {
	if b.Status != "validating" && b.Status != "in_progress" {
		return
	}
	b.polls++
	if s.holdBatches {
		b.Status = "in_progress"
		return
	}
	polls := s.opts.batchPolls
	if polls <= 0 {
		polls = 2
	}
	if b.polls < polls {
		b.Status = "in_progress"
		return
	}
	b.Status = "finalizing" // a poll meanwhile finds it under way
	var out, errs [][]byte
	sc := bufio.NewScanner(bytes.NewReader(s.files[b.Input]))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		l, status, ok := s.answerLine(sc.Bytes())
		if !ok {
			continue
		}
		if status >= 400 {
			errs, b.Failed = append(errs, l), b.Failed+1
		} else {
			out, b.Completed = append(out, l), b.Completed+1
		}
	}
	for _, lines := range [][][]byte{out, errs} {
		s.rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	}
	b.Status = "completed"
	if len(out) > 0 {
		b.Output = fmt.Sprintf("file-%s-out", b.ID)
		s.files[b.Output] = append(bytes.Join(out, []byte("\n")), '\n')
	}
	if len(errs) > 0 {
		b.Errors = fmt.Sprintf("file-%s-err", b.ID)
		s.files[b.Errors] = append(bytes.Join(errs, []byte("\n")), '\n')
	}
}

// answerLine answers one line of a batch's input as the chat endpoint
// would, and returns the output line with its status; not ok for a line
// that is not JSON, which is left out. Called with the server's lock held.
func (s *Server) answerLine(raw []byte) ([]byte, int, bool) {
	var line struct {
		CustomID string          `json:"custom_id"`
		Body     json.RawMessage `json:"body"`
	}
	if json.Unmarshal(raw, &line) != nil {
		return nil, 0, false
	}
	s.stats.BatchLines++
	req, err := decodeBody(line.Body, "/v1/chat/completions", http.Header{})
	status, body := http.StatusBadRequest, []byte(`{"error": {"message": "bad request"}}`)
	if err == nil {
		req.InBatch, req.CustomID = true, line.CustomID
		s.mu.Unlock() // the handler may take the server's counters
		rep := s.handler(req)
		s.mu.Lock()
		status = rep.Status
		if status == 0 {
			status = http.StatusOK
		}
		body = []byte(rep.Body)
		if rep.Body == "" {
			body = generate(req, rep, status)
		}
	}
	l, _ := json.Marshal(map[string]any{"id": "batch_req_" + line.CustomID, "custom_id": line.CustomID,
		"response": map[string]any{"status_code": status, "body": json.RawMessage(body)}, "error": nil})
	return l, status, true
}
