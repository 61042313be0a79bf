package templates

import (
	"math"
	"net/url"
	"strconv"
	"strings"
)

// PriceRow is one model's price in the settings table.
type PriceRow struct {
	Model         string
	InputPerMTok  float64
	OutputPerMTok float64
	CacheRead     float64 // per million cache-read tokens, as charged
	CacheWrite    float64 // per million cache-write tokens, as charged
	CacheUsual    bool    // both cache rates are the usual ratios to the input price
	UpdatedAt     string
}

// PriceForm is the state of the price form, kept as typed when it is refused.
type PriceForm struct {
	Model  string
	Input  string // USD per million input tokens
	Output string // USD per million output tokens
	// CacheRead and CacheWrite are USD per million prompt-cache tokens;
	// empty keeps the usual ratios to the input price.
	CacheRead  string
	CacheWrite string
	Error      string
	Edit       bool // the model already has a price: saving changes it
}

// SettingsView is the settings page: the price table and its form, and
// for owners the access tokens.
type SettingsView struct {
	Page   Page
	Prices []PriceRow
	Form   PriceForm
	Tokens *TokensView // nil: the user may not manage tokens
}

// TokensView lists the access tokens and holds the form that makes one.
type TokensView struct {
	Rows               []TokenRow
	Open               bool // the server asks for no token yet
	NowAsks            bool // the token just made turned token sign-in on
	First              bool // no active token exists: the next one is an owner's
	FormName, FormRole string
	Error              string
	// NewSecret is a token just made, shown this once, with its name and role.
	NewSecret, NewName, NewRole string
}

// TokenRow is one token in the list.
type TokenRow struct {
	Name, Role, Created, CreatedBy, LastUsed, Revoked string
	Active                                            bool
}

// USD formats an amount in dollars: cents from $1, two significant digits below.
func USD(v float64) string {
	switch {
	case v == 0:
		return "$0"
	case v >= 1:
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	}
	decimals := min(int(-math.Floor(math.Log10(v)))+1, 8)
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if decimals > 2 {
		s = strings.TrimRight(s, "0")
	}
	return "$" + s
}

// PerMTok formats a price per million tokens: cents always, more digits when set.
func PerMTok(v float64) string {
	// Twelve significant digits drop what float arithmetic adds (0.30000000000000004).
	s := strconv.FormatFloat(v, 'g', 12, 64)
	s = strconv.FormatFloat(mustFloat(s), 'f', -1, 64)
	if i := strings.IndexByte(s, '.'); i < 0 || len(s)-i < 3 {
		s = strconv.FormatFloat(v, 'f', 2, 64)
	}
	return "$" + s
}

func queryEscape(s string) string { return url.QueryEscape(s) }

func mustFloat(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}
