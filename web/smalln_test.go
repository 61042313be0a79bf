package web_test

import (
	"fmt"
	"strings"
	"testing"

	"assay/store"
)

// With one sample and one repetition, the figures that need more are shown
// as "—" with a note that says why, not as zeros.
func TestStatisticsAtOneSampleShowADash(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	form := f.runForm(f.qaDataset(1), f.conditions("baseline"))
	form.Set("repetitions", "1")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)
	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	row := doc.Find("#summary tbody tr").First()
	undefined := row.Find("td.undefined")
	if undefined.Length() != 9 { // std, stderr and CI of three metrics
		t.Fatalf("%d cells left undefined in %q", undefined.Length(), strings.Join(strings.Fields(row.Text()), " "))
	}
	if title, _ := undefined.First().Attr("title"); !strings.Contains(title, "one scored sample") || strings.Contains(row.Text(), "4.00 – 4.00") {
		t.Errorf("title %q; row %q", title, strings.Join(strings.Fields(row.Text()), " "))
	}
	spread := doc.Find("#spread tbody tr").First()
	if n := spread.Find("td.undefined").Length(); n != 6 {
		t.Errorf("%d spread cells undefined, want 6: %q", n, strings.Join(strings.Fields(spread.Text()), " "))
	}
	if title, _ := spread.Find("td.undefined").First().Attr("title"); !strings.Contains(title, "one score per sample") {
		t.Errorf("spread title %q", title)
	}
}
