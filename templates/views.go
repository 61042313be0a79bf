// Package templates renders assay's pages from plain view data.
package templates

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Page is what every page's layout needs.
type Page struct {
	Title string
	Nav   string // datasets, conditions, runs, settings
	CSRF  string
	Flash Flash
	Auth  bool // tokens are in force: show who is signed in and the sign-out link
	// SharedLabel says what a read-only page is: "Shared report · read-only" by default.
	SharedLabel string
	User        string // the signed-in name
	Role        string // and their role
	// Shared marks a page reached by a share link: no navigation, no forms.
	Shared bool
	// Bare shows the brand alone: the sign-in page, a link's error page.
	Bare bool
}

// CanOwn says whether the reader may do what needs an owner: change
// datasets, conditions, rubrics and prices, launch and manage runs, share.
// On a server without tokens everyone may.
func (p Page) CanOwn() bool { return !p.Auth || p.Role == "owner" }

// Flash is a one-line message shown above a page's content.
type Flash struct {
	Kind    string // ok, error, info
	Message string
	// Copy is a value to copy, shown under the message with a button: a
	// link just made, which is not shown again.
	Copy string
	// Place is the id of the part of the page that shows it, where the page
	// lands; "" for the top of the page.
	Place string
}

// When formats a time for pages, in UTC.
func When(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// Short returns the first 12 characters of a hex digest.
func Short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// Bytes formats a size in bytes for people.
func Bytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Int writes a count for reading, its thousands apart: "150,000".
func Int(n int) string {
	s := strconv.Itoa(n)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	if len(s) <= 3 {
		return sign + s
	}
	var b strings.Builder
	b.WriteString(sign)
	first := len(s) % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(s[:first])
	for i := first; i < len(s); i += 3 {
		b.WriteByte(',')
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

func letter(i int) string { return string(rune('A' + i)) }

func csrfHeaders(token string) string {
	return fmt.Sprintf(`{"X-CSRF-Token": %q}`, token)
}
