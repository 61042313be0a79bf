package llm

import (
	"assay/internal/redact"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Error is the final failure of a chat call, after any retries. It wraps
// the last underlying error, so errors.Is(err, context.Canceled) works.
type Error struct {
	// StatusCode is the last HTTP status, 0 when no response came.
	StatusCode int
	// Retryable says the last failure was of a kind that can succeed later;
	// true here means the attempts ran out.
	Retryable bool
	// Timeout says the last attempt got no answer within its deadline.
	Timeout bool
	// Malformed says the last answer came but was not a usable completion.
	Malformed bool
	Attempts  int
	Message   string
	err       error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("llm: %s (after %d attempts)", e.Message, e.Attempts)
	}
	return "llm: " + e.Message
}

// Unwrap returns the underlying error of the last attempt.
func (e *Error) Unwrap() error { return e.err }

// failure is one failed attempt, classified.
type failure struct {
	status    int
	retryable bool
	malformed bool // the server answered 2xx with a body that is not a chat completion
	timeout   bool // no answer within the attempt's deadline
	message   string
	header    http.Header // of the failed response, for Retry-After
	err       error
}

// asError turns the last failure into the Error Chat returns.
func (f *failure) asError(attempts int) *Error {
	return &Error{
		StatusCode: f.status,
		Retryable:  f.retryable,
		Timeout:    f.timeout,
		Malformed:  f.malformed,
		Attempts:   attempts,
		Message:    f.message,
		err:        f.err,
	}
}

// classify decides what one failed attempt means. ctx is the caller's
// context and callCtx the attempt's, so a per-attempt timeout (retryable)
// is told apart from the caller giving up (final).
func classify(ctx, callCtx context.Context, timeout time.Duration, status int, err error) *failure {
	if ctx.Err() != nil {
		return &failure{message: "canceled: " + ctx.Err().Error(), err: ctx.Err()}
	}
	if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		return &failure{retryable: true, timeout: true, message: fmt.Sprintf("no answer within %s", timeout), err: err}
	}
	if errors.Is(err, ErrReplyTooLarge) {
		return &failure{status: status, message: ErrReplyTooLarge.Error(), err: err}
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return httpFailure(apiErr.HTTPStatusCode, apiErr.Message, err)
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return httpFailure(reqErr.HTTPStatusCode, snippet(ctx, string(reqErr.Body)), err)
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if status/100 == 2 && (errors.As(err, &syntaxErr) || errors.As(err, &typeErr)) {
		return &failure{
			status:    status,
			retryable: true,
			malformed: true,
			message:   "server sent a malformed body: " + err.Error(),
			err:       err,
		}
	}
	msg := err.Error()
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) && status/100 == 2:
		return &failure{
			status:    status,
			retryable: true,
			malformed: true,
			message:   "the server's reply ended before its JSON did (a cut connection, or a body that is not JSON): " + msg,
			err:       err,
		}
	case errors.Is(err, io.EOF):
		msg = "server closed the connection without answering: " + msg
	}
	return &failure{status: status, retryable: transient(err), message: msg, err: err}
}

// httpFailure classifies an error status: 408, 429 and 5xx can succeed
// later, every other status fails at once.
func httpFailure(status int, msg string, err error) *failure {
	retryable := status == 408 || status == 429 || status >= 500
	if msg == "" {
		msg = "(empty body)"
	}
	return &failure{status: status, retryable: retryable, message: fmt.Sprintf("status %d: %s", status, msg), err: err}
}

// transient reports whether a transport error may go away on its own:
// dropped or reset connections, EOF, refused connections, network timeouts.
// Bad certificates, unknown hosts and malformed URLs will not.
func transient(err error) bool {
	var certErr *tls.CertificateVerificationError
	var authErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &certErr), errors.As(err, &authErr), errors.As(err, &hostErr):
		return false
	case errors.As(err, &dnsErr):
		return !dnsErr.IsNotFound
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return true
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // *url.Error is itself a net.Error; judge what it wraps
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	// net/http has no exported type for "server closed idle connection" or
	// "transport connection broken"; its message is all there is.
	return strings.Contains(err.Error(), "connection")
}

// snippet shortens a raw error body to one readable line, cleaned of the
// run's secrets (ctx carries them) before it is cut.
func snippet(ctx context.Context, s string) string {
	s = redact.Text(ctx, strings.Join(strings.Fields(s), " "))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
