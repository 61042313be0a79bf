package web

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"time"

	"assay/runner/route"
	"assay/static"
	"assay/store"
	"assay/templates"
)

// exportHTML writes the report as one HTML file: its CSS, echarts.min.js and
// report.js inline, its charts' data in the page, and no reference to
// anything outside the file, so that it opens from file:// with no network.
func exportHTML(ctx context.Context, db *store.DB, sc *reportScope, r *viewed, q reportQuery, w io.Writer) error {
	if r == nil {
		var err error
		if r, err = buildReport(ctx, db, sc); err != nil {
			return err
		}
	}
	now := time.Now()
	v, err := r.view(ctx, db, q, true, now)
	if err != nil {
		return err
	}
	assets, err := inlineAssets()
	if err != nil {
		return err
	}
	if len(r.AgentModels()) >= 2 && sc.Run.Status.Finished() {
		res, err := r.Route(ctx, db, "", route.Options{Orders: route.DefaultOrders, Seed: 1, Weights: route.DefaultWeights}, nil)
		if err == nil {
			rv := templates.RoutingView{Models: r.AgentModels()}
			routingView(&rv, res, route.Thompson)
			v.Routing = &rv
		} else if store.ErrorCode(err) != store.EINVALID {
			return err
		}
	}
	transcripts, err := exportTranscripts(ctx, db, sc)
	if err != nil {
		return err
	}
	return templates.ExportDocument(v, transcripts, assets, templates.When(now)).Render(ctx, w)
}

// exportTranscripts is every sample of the run with its answers and
// judgements, for the exported file to stand alone for a reviewer.
func exportTranscripts(ctx context.Context, db *store.DB, sc *reportScope) ([]templates.Transcript, error) {
	results, err := db.Results(ctx, sc.Run.ID)
	if err != nil {
		return nil, err
	}
	bySample := map[int64][]store.Result{}
	for _, r := range results {
		bySample[r.SampleRow] = append(bySample[r.SampleRow], r)
	}
	samples, err := db.Samples(ctx, sc.Dataset.ID, 0, 0)
	if err != nil {
		return nil, err
	}
	var out []templates.Transcript
	for _, smp := range samples {
		rs := bySample[smp.ID]
		if len(rs) == 0 {
			continue
		}
		t := templates.Transcript{Sample: goldenRow(smp, sc.Dataset.Kind), Conditions: sampleConditions(sc, rs)}
		for i := range t.Conditions {
			t.Conditions[i].Anchor = "" // many samples in one file: no anchors to collide
		}
		search := []string{smp.SampleID, smp.Input, smp.Reference}
		for _, r := range rs {
			search = append(search, r.Condition, r.Response, r.Error)
			if r.Error != "" {
				t.Errors++
			}
		}
		t.Search = strings.ToLower(strings.Join(search, " "))
		out = append(out, t)
	}
	return out, nil
}

// closingTag matches what would end an inline style or script early.
var closingTag = regexp.MustCompile(`(?i)</(script|style)`)

// inlineAssets reads the embedded stylesheets and scripts a report needs.
func inlineAssets() (templates.InlineAssets, error) {
	var a templates.InlineAssets
	for _, name := range []string{"app.css", "report.css", "echarts.min.js", "report.js", "transcripts.js"} {
		b, err := fs.ReadFile(static.FS, name)
		if err != nil {
			return a, fmt.Errorf("read %s: %w", name, err)
		}
		// No asset holds "</script" or "</style" today; escaping keeps it so.
		text := closingTag.ReplaceAllString(string(b), `<\/$1`)
		if strings.HasSuffix(name, ".css") {
			a.CSS += text + "\n"
		} else {
			a.JS = append(a.JS, text)
		}
	}
	return a, nil
}
