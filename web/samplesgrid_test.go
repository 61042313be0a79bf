package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/store"
	"assay/web"
)

// The samples as a grid: a row per sample, a column per condition, the
// chosen metric in each cell; filters and the metric choice apply.
func TestSamplesGrid(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	_, doc := b.get(fmt.Sprintf("/runs/%d/samples", id))
	grid, _ := doc.Find("#view-grid").Attr("href")
	_, doc = b.get(grid)
	var heads []string
	doc.Find("#samples-grid thead th.num").Each(func(_ int, s *goquery.Selection) { heads = append(heads, s.Text()) })
	rows := doc.Find("#samples-grid tbody tr")
	if strings.Join(heads, "|") != "baseline|with-docs" || rows.Length() != 5 {
		t.Fatalf("grid columns %q, %d rows", heads, rows.Length())
	}
	cell := func(row, col int) string {
		return strings.Join(strings.Fields(rows.Eq(row).Find("td.num").Eq(col).Text()), " ")
	}
	// s1: factual_adherence 3, 3 under baseline; 4, 4 under with-docs. s5 failed under baseline.
	if cell(0, 0) != "3.00 ± 0.00" || cell(0, 1) != "4.00 ± 0.00" || cell(4, 0) != "2 errors" || cell(4, 1) != "1.00 ± 0.00" {
		t.Errorf("cells: s1 %q %q, s5 %q %q", cell(0, 0), cell(0, 1), cell(4, 0), cell(4, 1))
	}
	// Another metric, and a filter: the view stays a grid.
	_, doc = b.get(grid + "&metric=exact_match.exact_match&condition=baseline&below=0.6")
	rows = doc.Find("#samples-grid tbody tr")
	if rows.Length() != 3 { // exact_match under baseline: s1 0.5, s2 0, s4 0.5
		t.Errorf("filtered grid: %d rows", rows.Length())
	}
	if got := strings.Join(strings.Fields(rows.Eq(0).Find("td.num").Eq(0).Text()), " "); got != "0.50 ± 0.71" {
		t.Errorf("s1's exact_match under baseline: %q", got)
	}
	if got := strings.Join(strings.Fields(rows.Eq(0).Find("td.num").Eq(1).Text()), " "); got != "·" {
		t.Errorf("with-docs under a baseline filter: %q", got)
	}
	if v, _ := doc.Find(`#sample-filter input[name=view]`).Attr("value"); v != "grid" {
		t.Error("the filter form does not keep the grid")
	}
}
