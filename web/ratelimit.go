package web

import (
	"strconv"
	"sync"
	"time"
)

// Login limits: a client address may fail this many times in a window;
// then it waits, twice as long each time it fails again, up to maxLockout.
const (
	loginFailures = 10
	loginWindow   = time.Minute
	firstLockout  = time.Minute
	maxLockout    = time.Hour
)

// loginLimiter counts failed logins by client address.
type loginLimiter struct {
	mu      sync.Mutex
	now     func() time.Time
	clients map[string]*loginClient
}

type loginClient struct {
	start    time.Time // of the window
	failures int       // in the window
	until    time.Time // locked out until
	lockouts int       // in a row
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{now: time.Now, clients: map[string]*loginClient{}}
}

// wait is how long ip must wait before it may try again; 0 when it may now.
func (l *loginLimiter) wait(ip string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.clients[ip]; c != nil {
		if d := c.until.Sub(l.now()); d > 0 {
			return d
		}
	}
	return 0
}

// fail counts a failed login of ip, locking it out when its window is full.
func (l *loginLimiter) fail(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	c := l.clients[ip]
	if c == nil {
		if len(l.clients) > 10000 {
			l.prune(now)
		}
		c = &loginClient{start: now}
		l.clients[ip] = c
	}
	if now.Sub(c.start) > loginWindow {
		c.start, c.failures = now, 0
	}
	c.failures++
	if c.failures >= loginFailures {
		c.until = now.Add(min(firstLockout<<c.lockouts, maxLockout))
		c.lockouts++
		c.start, c.failures = now, 0
	}
}

// prune drops clients with nothing left to remember.
func (l *loginLimiter) prune(now time.Time) {
	for ip, c := range l.clients {
		if now.After(c.until) && now.Sub(c.start) > loginWindow && now.Sub(c.until) > maxLockout {
			delete(l.clients, ip)
		}
	}
}

func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(int((d + time.Second - 1) / time.Second))
}
