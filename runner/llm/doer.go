package llm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// doer sits between go-openai and the HTTP client. It writes the pinned
// temperature into the request body, because go-openai's
// ChatCompletionRequest.Temperature is a float32 tagged omitempty and so
// silently drops 0 (sashabaranov/go-openai#9), and it records the status
// and Retry-After header of each attempt, which go-openai's errors lose.
type doer struct {
	hc          *http.Client
	temperature *float64
}

// attemptKey keys the *attempt record in a request's context.
type attemptKey struct{}

// attempt is what doer saw of one HTTP exchange.
type attempt struct {
	status int
	header http.Header
}

// withAttempt returns a context under which doer records into a.
func withAttempt(ctx context.Context, a *attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// Do implements openai.HTTPDoer.
func (d *doer) Do(req *http.Request) (*http.Response, error) {
	if d.temperature != nil && req.Body != nil {
		patched, err := patchTemperature(req, *d.temperature)
		if err != nil {
			return nil, err
		}
		req = patched
	}
	resp, err := d.hc.Do(req)
	if resp != nil {
		resp.Body = &boundedBody{ReadCloser: resp.Body, left: MaxReplyBytes}
		if a, ok := req.Context().Value(attemptKey{}).(*attempt); ok {
			a.status = resp.StatusCode
			a.header = resp.Header.Clone()
		}
	}
	return resp, err
}

// MaxReplyBytes bounds one reply of a model or judge server, and one answer
// of a command agent: a larger one is an error on its result, not a few
// gigabytes of memory.
const MaxReplyBytes = 8 << 20

// ErrReplyTooLarge is the read error of a reply past MaxReplyBytes.
var ErrReplyTooLarge = fmt.Errorf("the reply is larger than %d MiB; assay stops reading there", MaxReplyBytes>>20)

// boundedBody fails a read past its budget.
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, ErrReplyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// patchTemperature returns a copy of req whose JSON body carries
// "temperature": t exactly as a float64.
func patchTemperature(req *http.Request, t float64) (*http.Request, error) {
	var body []byte
	var err error
	if n := req.ContentLength; n > 0 {
		// Read into room of the body's size: ReadAll would copy it as it grows.
		body = make([]byte, n)
		_, err = io.ReadFull(req.Body, body)
	} else {
		body, err = io.ReadAll(req.Body)
	}
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	body, err = setTopLevelNumber(body, "temperature", strconv.FormatFloat(t, 'g', -1, 64))
	if err != nil {
		return nil, fmt.Errorf("patch temperature: %w", err)
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(body)), nil
	}
	return out, nil
}

// setTopLevelNumber sets key of a JSON object to a number, written as
// given: its value replaced where the object has the key at its top level
// (a nested key of that name, in a tool's schema say, is left alone), else
// added at the end. One pass over the bytes: decoding the body into a map
// and encoding it again took a fifth of the engine's CPU.
func setTopLevelNumber(body []byte, key, number string) ([]byte, error) {
	want := `"` + key + `"`
	depth, inString, escaped := 0, false, false
	last := -1 // the object's closing brace
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			if depth == 1 && bytes.HasPrefix(body[i:], []byte(want)) {
				j := i + len(want)
				for j < len(body) && isSpace(body[j]) {
					j++
				}
				if j < len(body) && body[j] == ':' {
					start := j + 1
					for start < len(body) && isSpace(body[start]) {
						start++
					}
					end := start
					for end < len(body) && !isSpace(body[end]) && body[end] != ',' && body[end] != '}' {
						end++
					}
					out := make([]byte, 0, len(body)+len(number))
					out = append(append(append(out, body[:start]...), number...), body[end:]...)
					return out, nil
				}
			}
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				last = i
			}
		}
	}
	if last < 0 || inString || body[last] != '}' {
		return nil, fmt.Errorf("the request body is not a JSON object")
	}
	head := bytes.TrimRightFunc(body[:last], func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
	out := make([]byte, 0, len(body)+len(key)+len(number)+4)
	out = append(out, head...)
	if len(head) > 0 && head[len(head)-1] != '{' {
		out = append(out, ',')
	}
	out = append(append(append(append(out, want...), ':'), number...), '}')
	return append(out, body[last+1:]...), nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
