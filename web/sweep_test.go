package web_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/store"
	"assay/web"
)

// A sweep of many conditions keeps its report readable: what dominates a
// metric's spread, the same under every condition, is said once per metric;
// the charts, one per condition, are folded; and the tests of every pair
// (21 pairs × 3 metrics here) are folded under those that differ, smallest
// p first.
func TestReportOfASweepOfConditions(t *testing.T) {
	b, db := newServer(t, web.Config{})
	var rows []map[string]any
	for i := 1; i <= 12; i++ {
		rows = append(rows, map[string]any{"id": fmt.Sprintf("q%02d", i), "question": fmt.Sprintf("Question %d?", i), "answer": "A."})
	}
	conditions := []string{"c1", "c2", "c3", "c4", "c5", "c6", "strong"}
	sr := storeRun(t, db, "sweep.jsonl", jsonl(rows...), conditions, 1, func(s store.Sample, c string, _ int) store.Result {
		v := float64(1 + s.Ordinal%3) // the samples differ, the same way under every condition
		if c == "strong" {
			v += 2 // one condition is better on every sample, by two points
		}
		return answered("An answer.", rubric(v, v, v))
	})
	_, doc := b.get(fmt.Sprintf("/runs/%d", sr.Run.ID))

	// One line for the part that is the largest everywhere, each metric
	// named once for every condition, its advice said once.
	sentences := doc.Find(".variance-sentences li")
	if sentences.Length() != 1 {
		t.Errorf("%d variance sentences, want one: %q", sentences.Length(), sentences.Text())
	}
	got := strings.Join(strings.Fields(sentences.Text()), " ")
	if !strings.HasPrefix(got, "The samples' part is the largest in every condition · rubric · factual_adherence; every condition · rubric · completeness;") ||
		strings.Count(got, "more samples") != 1 || strings.Count(got, "every condition") != 3 {
		t.Errorf("the sentence: %q", got)
	}

	if got := doc.Find("details.variance-charts-fold .chart").Length(); got != 7 {
		t.Errorf("%d variance charts folded, want one per condition", got)
	}

	if got := doc.Find("#all-pairs tbody tr").Length(); got != 63 {
		t.Fatalf("%d rows in every pair's table, want 21 pairs × 3 metrics", got)
	}
	if doc.Find("details.all-pairs-fold #all-pairs").Length() != 1 {
		t.Error("a list of 63 tests is not folded")
	}
	// "strong" differs from each of the six others on each metric; the
	// others do not differ from one another.
	differ := doc.Find("#all-pairs-differ tbody tr")
	if differ.Length() != 18 || !strings.HasPrefix(text(doc, "#all-pairs-differ-count"), "18 of 63 tests differ") {
		t.Fatalf("%d tests shown as differing (%q), want 6 pairs × 3 metrics", differ.Length(), text(doc, "#all-pairs-differ-count"))
	}
	last := -1.0
	differ.Each(func(_ int, s *goquery.Selection) {
		cells := s.Find("td")
		if a, b := cells.Eq(1).Text(), cells.Eq(2).Text(); a != "strong" && b != "strong" {
			t.Errorf("%s and %s shown as differing", a, b)
		}
		p := strings.TrimSpace(cells.Eq(6).Text())
		v, err := strconv.ParseFloat(strings.TrimPrefix(p, "< "), 64)
		if err != nil || v < last {
			t.Errorf("adjusted p %q after %g: not smallest first", p, last)
		}
		last = v
	})
}
