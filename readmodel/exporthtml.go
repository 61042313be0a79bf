package readmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"time"

	"github.com/a-h/templ"

	"assay"
	"assay/report"
	"assay/route"
	"assay/static"
	"assay/store"
	"assay/templates"
)

// ExportDoc is a report ready to be written as one HTML file: its CSS,
// echarts.min.js and report.js inline, its charts' data in the page, and no
// reference to anything outside the file, so that it opens from file://
// with no network.
type ExportDoc struct {
	v      templates.ReportView
	assets templates.InlineAssets
	now    time.Time
	list   templ.Component // the transcripts, read as they are written; nil without results
}

// PrepareExportHTML computes what the file shows but its transcripts,
// which are read as the file is written: what can fail before a byte is
// sent fails here.
// A run over several models carries its routing replay with the default
// settings: replay, when given, returns it from those a server keeps (the
// Routing page's, by the same key), computing it when none is.
func PrepareExportHTML(ctx context.Context, db *store.DB, sc *Scope, r *Viewed, q Query,
	replay func(opt route.Options, compute func(context.Context) (*report.Routing, error)) (*report.Routing, error)) (*ExportDoc, error) {
	if r == nil {
		var err error
		if r, err = BuildReport(ctx, db, sc, nil); err != nil {
			return nil, err
		}
	}
	d := &ExportDoc{now: time.Now()}
	var err error
	if d.v, err = r.Page(ctx, db, q, true, d.now); err != nil {
		return nil, err
	}
	if d.assets, err = inlineAssets(); err != nil {
		return nil, err
	}
	if len(report.RunModels(sc.Run)) >= 2 && sc.Run.Status.Finished() {
		opt := route.Options{Orders: route.DefaultOrders, Seed: 1, Weights: route.DefaultWeights}
		compute := func(ctx context.Context) (*report.Routing, error) { return r.Route(ctx, db, "", opt, nil) }
		var res *report.Routing
		var err error
		if replay != nil {
			res, err = replay(opt, compute)
		} else {
			res, err = compute(ctx)
		}
		if err == nil {
			rv := templates.RoutingView{Models: report.RunModels(sc.Run)}
			RoutingView(&rv, res, route.Thompson)
			d.v.Routing = &rv
		} else if assay.ErrorCode(err) != assay.EINVALID {
			return nil, err
		}
	}
	samples, err := db.ResultSamples(ctx, sc.Run.ID)
	if err != nil {
		return nil, err
	}
	if samples > 0 {
		d.list = templates.ExportTranscripts(exportTranscripts(db, sc, samples, TranscriptBudget))
	}
	return d, nil
}

// Write writes the file.
func (d *ExportDoc) Write(ctx context.Context, w io.Writer) error {
	list := d.list
	if list == nil {
		list = templ.NopComponent
	}
	return templates.ExportDocument(d.v, list, d.assets, templates.When(d.now)).Render(ctx, w)
}

// exportHTML writes the report as one HTML file.
func exportHTML(ctx context.Context, db *store.DB, sc *Scope, r *Viewed, q Query, w io.Writer) error {
	d, err := PrepareExportHTML(ctx, db, sc, r, q, nil)
	if err != nil {
		return err
	}
	return d.Write(ctx, w)
}

// TranscriptBudget bounds the bytes of a file's transcripts: every
// transcript of a 150,000-result run (10,000 samples) made a file of
// 917 MB, which no browser opens, and took the server 3.8 GB to write;
// Chromium opens one of 35 MB in about 5 s. A variable for tests.
var TranscriptBudget = 32 << 20

// exportTranscripts writes each sample the run answered, in the order its
// dataset's samples were stored, with its answers and judgements, for the file to stand alone for
// a reviewer: read a few samples at a time (EachResult), until the
// transcripts reach budget bytes; then it says where the others are. The
// run answered total samples.
func exportTranscripts(db *store.DB, sc *Scope, total, budget int) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		cw := &byteCounter{w: w}
		shown := 0
		var rs []store.Result
		flush := func() error {
			if len(rs) == 0 {
				return nil
			}
			smp, err := db.Sample(ctx, rs[0].SampleRow)
			if err != nil {
				return err
			}
			t := templates.Transcript{Sample: GoldenRow(*smp, sc.Dataset.Kind), Conditions: SampleConditions(sc, rs)}
			for i := range t.Conditions {
				t.Conditions[i].Anchor = "" // many samples in one file: no anchors to collide
			}
			for _, r := range rs {
				if r.Error != "" {
					t.Errors++
				}
			}
			rs = rs[:0]
			shown++
			if err := templates.ExportTranscript(string(sc.Dataset.Kind), t).Render(ctx, cw); err != nil {
				return err
			}
			if cw.n >= int64(budget) {
				return errBudgetSpent
			}
			return nil
		}
		err := db.EachResult(ctx, sc.Run.ID, func(r *store.Result) error {
			if len(rs) > 0 && rs[0].SampleRow != r.SampleRow {
				if err := flush(); err != nil {
					return err
				}
			}
			rs = append(rs, *r)
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil && err != errBudgetSpent {
			return err
		}
		if shown < total {
			return templates.ExportTranscriptsCut(shown, total, int64(budget)).Render(ctx, w)
		}
		return nil
	})
}

// errBudgetSpent stops the walk of a run's results once the transcripts
// have reached their budget.
var errBudgetSpent = errors.New("the transcripts' budget is spent")

// byteCounter counts what it passes on.
type byteCounter struct {
	w io.Writer
	n int64
}

func (c *byteCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
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
