package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"assay/store"
	"assay/web"
)

func TestDeleteARun(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	running, _ := handRunIn(t, db, store.RunRunning)
	if _, err := db.CreateShare(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	_, doc := b.get(fmt.Sprintf("/runs/%d", id))
	confirm, _ := doc.Find("#delete-run").Attr("data-confirm")
	if !strings.Contains(confirm, "20 results") || !strings.Contains(confirm, "cannot be undone") {
		t.Errorf("the delete button asks %q", confirm)
	}
	if _, doc := b.get(fmt.Sprintf("/runs/%d", running)); doc.Find("#delete-run").Length() != 0 {
		t.Error("a running run offers to be deleted")
	}
	resp, doc := b.postForm(fmt.Sprintf("/runs/%d/delete", running), url.Values{})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(doc.Text(), "cancel it before deleting it") {
		t.Errorf("deleting a running run: %d %q", resp.StatusCode, text(doc, "main"))
	}
	resp, doc = b.postForm(fmt.Sprintf("/runs/%d/delete", id), url.Values{})
	if resp.Request.URL.Path != "/runs" || !strings.Contains(text(doc, ".flash"), "and its 20 results") {
		t.Fatalf("delete: at %s, %q", resp.Request.URL, text(doc, ".flash"))
	}
	if _, err := db.Run(t.Context(), id); err == nil {
		t.Error("the run is still there")
	}
	if res, _ := db.Results(t.Context(), id); len(res) != 0 {
		t.Errorf("%d results left", len(res))
	}
	if shares, _ := db.Shares(t.Context(), id); len(shares) != 0 {
		t.Errorf("%d share links left", len(shares))
	}
	if res, _ := db.Results(t.Context(), running); len(res) != 20 {
		t.Errorf("the other run lost results: %d", len(res))
	}
}

func TestDeleteADataset(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	run, _ := db.Run(t.Context(), id)
	ds := run.DatasetID
	_, doc := b.get(fmt.Sprintf("/datasets/%d", ds))
	if doc.Find("#with-runs").Length() != 1 {
		t.Fatal("the dataset page does not offer to delete its run with it")
	}
	resp, doc := b.postForm(fmt.Sprintf("/datasets/%d/delete", ds), url.Values{})
	if resp.Request.URL.Path != fmt.Sprintf("/datasets/%d", ds) || !strings.Contains(text(doc, ".flash"), "1 runs use dataset") {
		t.Errorf("without with_runs: at %s, %q", resp.Request.URL, text(doc, ".flash"))
	}
	if _, err := db.Run(t.Context(), id); err != nil {
		t.Fatal("a refused delete removed the run")
	}
	resp, doc = b.postForm(fmt.Sprintf("/datasets/%d/delete", ds), url.Values{"with_runs": {"1"}})
	if resp.Request.URL.Path != "/datasets" || !strings.Contains(text(doc, ".flash"), "and its 1 runs") {
		t.Fatalf("with_runs: at %s, %q", resp.Request.URL, text(doc, ".flash"))
	}
	if _, err := db.Dataset(t.Context(), ds); err == nil {
		t.Error("the dataset is still there")
	}
	if _, err := db.Run(t.Context(), id); err == nil {
		t.Error("its run is still there")
	}
	if samples, _ := db.Samples(t.Context(), ds, 0, 0); len(samples) != 0 {
		t.Errorf("%d samples left", len(samples))
	}
}
