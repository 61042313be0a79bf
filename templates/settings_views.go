package templates

import (
	"net/url"
	"strconv"
)

// PriceRow is one model's price in the settings table.
type PriceRow struct {
	Model         string
	InputPerMTok  float64
	OutputPerMTok float64
	UpdatedAt     string
}

// PriceForm is the state of the price form, kept as typed when it is refused.
type PriceForm struct {
	Model  string
	Input  string // USD per million input tokens
	Output string // USD per million output tokens
	Error  string
	Edit   bool // the model already has a price: saving changes it
}

// SettingsView is the settings page: the price table and its form.
type SettingsView struct {
	Page   Page
	Prices []PriceRow
	Form   PriceForm
}

// USD formats an amount in dollars with as many decimals as small amounts need.
func USD(v float64) string {
	switch {
	case v == 0:
		return "$0"
	case v >= 100:
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	case v >= 0.01:
		return "$" + strconv.FormatFloat(v, 'f', 4, 64)
	}
	return "$" + strconv.FormatFloat(v, 'g', 3, 64)
}

// PerMTok formats a price per million tokens as the user typed it.
func PerMTok(v float64) string {
	return "$" + strconv.FormatFloat(v, 'f', -1, 64)
}

func queryEscape(s string) string { return url.QueryEscape(s) }
