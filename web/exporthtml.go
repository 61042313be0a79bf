package web

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"time"

	"assay/static"
	"assay/store"
	"assay/templates"
)

// exportHTML writes the report as one HTML file: its CSS, echarts.min.js and
// report.js inline, its charts' data in the page, and no reference to
// anything outside the file, so that it opens from file:// with no network.
func exportHTML(ctx context.Context, db *store.DB, sc *reportScope, q reportQuery, w io.Writer) error {
	r, err := buildReport(ctx, db, sc)
	if err != nil {
		return err
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
	return templates.ExportDocument(v, assets, templates.When(now)).Render(ctx, w)
}

// closingTag matches what would end an inline style or script early.
var closingTag = regexp.MustCompile(`(?i)</(script|style)`)

// inlineAssets reads the embedded stylesheets and scripts a report needs.
func inlineAssets() (templates.InlineAssets, error) {
	var a templates.InlineAssets
	for _, name := range []string{"app.css", "report.css", "echarts.min.js", "report.js"} {
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
