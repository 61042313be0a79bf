package llm

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// doer sits between the Anthropic SDK and the HTTP client: it bounds the
// reply and records the status and Retry-After header of each attempt,
// which the SDK's errors lose.
type doer struct {
	hc *http.Client
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
