package llmtest

import (
	"net/http"
	"strconv"
)

// Fault is a kind of failure WithFaults injects.
type Fault string

// The faults WithFaults injects, each as a real server or proxy sends it.
const (
	// FaultRateLimit is a 429 with Retry-After: 0 or 1.
	FaultRateLimit Fault = "rate_limit"
	// FaultServerError is a 500 with an OpenAI-style error body.
	FaultServerError Fault = "server_error"
	// FaultUnavailable is a 503 with a plain-text body, as a proxy sends it.
	FaultUnavailable Fault = "unavailable"
	// FaultMalformed is a 200 whose body is not valid JSON.
	FaultMalformed Fault = "malformed"
	// FaultDrop closes the connection without a response.
	FaultDrop Fault = "drop"
)

// allFaults lists the kinds WithFaults picks from.
var allFaults = []Fault{FaultRateLimit, FaultServerError, FaultUnavailable, FaultMalformed, FaultDrop}

// MalformedBody is the body FaultMalformed sends: a garbled completion
// that no JSON decoder accepts.
const MalformedBody = `{"id":"chatcmpl-fault","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}},,`

// faultReply is the reply standing in for a request hit by fault f.
func (s *Server) faultReply(f Fault) Reply {
	switch f {
	case FaultRateLimit:
		s.mu.Lock()
		wait := s.rng.IntN(2)
		s.mu.Unlock()
		return Reply{Status: http.StatusTooManyRequests, RetryAfter: strconv.Itoa(wait),
			Content: "Rate limit reached for requests. Please try again in " + strconv.Itoa(wait) + "s."}
	case FaultServerError:
		return Reply{Status: http.StatusInternalServerError,
			Content: "The server had an error while processing your request. Sorry about that!"}
	case FaultUnavailable:
		return Reply{Status: http.StatusServiceUnavailable, Body: "upstream connect error or disconnect/reset before headers"}
	case FaultMalformed:
		return Reply{Body: MalformedBody}
	default:
		return Reply{Drop: true}
	}
}
