package llm

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// backoff is the wait after the n-th failed attempt (n from 1): exponential
// growth capped at MaxBackoff, with equal jitter, so concurrent workers
// spread out yet every wait is at least half the nominal one.
func (p RetryPolicy) backoff(n int) time.Duration {
	nominal := float64(p.InitialBackoff) * math.Pow(p.Multiplier, float64(n-1))
	nominal = math.Min(nominal, float64(p.MaxBackoff))
	half := time.Duration(nominal / 2)
	if half <= 0 {
		return time.Duration(nominal)
	}
	return half + rand.N(half+1)
}

// wait is the pause before retrying after the n-th failed attempt: the
// server's Retry-After when it sent one, else the backoff; never more than
// MaxBackoff.
func (p RetryPolicy) wait(n int, header http.Header, now time.Time) time.Duration {
	if d, ok := retryAfter(header, now); ok {
		return min(d, p.MaxBackoff)
	}
	return p.backoff(n)
}

// retryAfter reads how long the server asked to wait: retry-after-ms
// (sent by OpenAI), or Retry-After as seconds or an HTTP-date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, ok := waitValue(v); ok {
			return duration(ms, time.Millisecond), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, ok := waitValue(v); ok {
		return duration(secs, time.Second), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// waitValue reads a number of seconds or milliseconds a server asks to
// wait. A negative, infinite or NaN one is no valid wait: the caller falls
// back to its own backoff, rather than retrying at once.
func waitValue(v string) (float64, bool) {
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) || n < 0 {
		return 0, false
	}
	return n, true
}

// longestWait bounds a wait the server asks for before it becomes a Duration:
// 1e300 seconds would overflow to a negative wait, and every retry would fire
// at once. Callers cap it again at the policy's MaxBackoff.
const longestWait = 24 * time.Hour

// duration is n units as a Duration, within [0, longestWait].
func duration(n float64, unit time.Duration) time.Duration {
	if !(n > 0) {
		return 0
	}
	if n >= float64(longestWait/unit) {
		return longestWait
	}
	return time.Duration(n * float64(unit))
}
