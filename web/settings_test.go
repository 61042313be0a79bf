package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"assay/web"
)

func TestSettingsAddChangeDeletePrice(t *testing.T) {
	b, db := newServer(t, web.Config{})
	_, doc := b.get("/settings")
	if !strings.Contains(text(doc, "#snapshot-note"), "never changes the cost of a past run") {
		t.Errorf("the page should say that prices are snapshotted into runs: %q", text(doc, "#snapshot-note"))
	}
	_, doc = b.postForm("/settings/prices", url.Values{"model": {"gpt-4o-mini"}, "input": {"0.15"}, "output": {"$0.60"}})
	if row := text(doc, "#prices tbody tr"); !strings.Contains(row, "gpt-4o-mini") || !strings.Contains(row, "$0.15") || !strings.Contains(row, "$0.6") {
		t.Fatalf("price row %q", row)
	}

	_, doc = b.get("/settings?model=gpt-4o-mini")
	if v, _ := doc.Find("#input").Attr("value"); v != "0.15" {
		t.Errorf("edit form input price %q, want 0.15", v)
	}
	b.postForm("/settings/prices", url.Values{"model": {"gpt-4o-mini"}, "input": {"0.2"}, "output": {"0.8"}})
	prices, _ := db.Prices(context.Background())
	if len(prices) != 1 || prices[0].InputPerMTok != 0.2 || prices[0].OutputPerMTok != 0.8 {
		t.Fatalf("after update: %+v", prices)
	}

	_, doc = b.postForm("/settings/prices/delete", url.Values{"model": {"gpt-4o-mini"}})
	if !strings.Contains(text(doc, ".flash.ok"), "Deleted the price of gpt-4o-mini") || doc.Find("#prices").Length() != 0 {
		t.Errorf("after delete: %q", text(doc, ".flash"))
	}
}

func TestSettingsPriceErrorsKeepTheInput(t *testing.T) {
	cases := []struct {
		name, model, input, output, want string
	}{
		{"no model", " ", "1", "2", "Model:"},
		{"not a number", "m", "cheap", "2", `Input price: "cheap"`},
		{"negative", "m", "1", "-2", "Output price"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, db := newServer(t, web.Config{})
			b.get("/settings")
			resp, doc := b.postForm("/settings/prices", url.Values{"model": {tc.model}, "input": {tc.input}, "output": {tc.output}})
			if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(text(doc, "#form-error"), tc.want) {
				t.Fatalf("got %d %q, want 422 %q", resp.StatusCode, text(doc, "#form-error"), tc.want)
			}
			if v, _ := doc.Find("#input").Attr("value"); v != tc.input {
				t.Errorf("input kept as %q, want %q", v, tc.input)
			}
			if prices, _ := db.Prices(context.Background()); len(prices) != 0 {
				t.Errorf("a refused price was stored: %+v", prices)
			}
		})
	}
}

func TestSettingsCachePrices(t *testing.T) {
	b, db := newServer(t, web.Config{})
	b.get("/settings")
	_, doc := b.postForm("/settings/prices", url.Values{"model": {"claude-sonnet-4-5"}, "input": {"3"}, "output": {"15"}})
	if row := squash(text(doc, "#prices tbody tr")); !strings.Contains(row, "$0.30 / $3.75 usual ratios") {
		t.Errorf("a price without cache rates: %q", row)
	}
	_, doc = b.postForm("/settings/prices", url.Values{"model": {"claude-sonnet-4-5"}, "input": {"3"}, "output": {"15"},
		"cache_read": {"0.5"}, "cache_write": {"4"}})
	prices, _ := db.Prices(t.Context())
	if len(prices) != 1 || prices[0].CacheReadPerMTok != 0.5 || prices[0].CacheWritePerMTok != 4 {
		t.Fatalf("stored %+v", prices)
	}
	if row := squash(text(doc, "#prices tbody tr")); !strings.Contains(row, "$0.50 / $4.00") || strings.Contains(row, "usual") {
		t.Errorf("a price with cache rates: %q", row)
	}
	_, doc = b.postForm("/settings/prices", url.Values{"model": {"m"}, "input": {"1"}, "output": {"1"}, "cache_read": {"-1"}})
	if !strings.Contains(text(doc, "#form-error"), "Cache read price") {
		t.Errorf("a negative cache price: %q", text(doc, "#form-error"))
	}
}
