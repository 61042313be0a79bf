package readmodel

import (
	"bytes"
	stdhtml "html"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"assay"
	"assay/store"
	"assay/templates"
)

// markdown renders model output as HTML that is safe to put in a page.
type markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

// responseMarkdown is built once and only read afterwards: both parts are safe
// for concurrent use.
var responseMarkdown = newMarkdown()

func newMarkdown() *markdown {
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(
			// Models write line by line; a newline in their output is meant as one.
			html.WithHardWraps(),
			renderer.WithNodeRenderers(util.Prioritized(htmlAsText{}, 100)),
		),
	)
	return &markdown{md: md, policy: bluemonday.UGCPolicy()}
}

// render converts markdown to sanitized HTML. Raw HTML in the source is shown
// as text, never dropped: a reader judging a model must see what it wrote.
// goldmark already empties dangerous link schemes; the UGC policy is the
// guarantee, whatever the renderer lets through.
func (m *markdown) render(source string) string {
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(source), &buf); err != nil {
		return "<pre>" + stdhtml.EscapeString(source) + "</pre>"
	}
	return m.policy.Sanitize(buf.String())
}

// htmlAsText renders the HTML found in markdown as escaped text: inline tags
// in place, blocks as preformatted text.
type htmlAsText struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (htmlAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
}

func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := node.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			_, _ = w.WriteString(stdhtml.EscapeString(string(seg.Value(source))))
		}
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if !entering {
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<pre>")
	lines := n.Lines()
	for i := range lines.Len() {
		line := lines.At(i)
		_, _ = w.WriteString(stdhtml.EscapeString(string(line.Value(source))))
	}
	if n.HasClosure() {
		_, _ = w.WriteString(stdhtml.EscapeString(string(n.ClosureLine.Value(source))))
	}
	_, _ = w.WriteString("</pre>\n")
	return ast.WalkSkipChildren, nil
}

// GoldenRow is a sample as its page shows it: the golden answer of a qa or
// math sample rendered like the responses beside it.
func GoldenRow(s store.Sample, kind assay.Kind) templates.SampleRow {
	row := SampleRow(s)
	if len(s.Choices) == 0 && s.Test == "" {
		row.ReferenceHTML = renderFor(kind)(s.Reference)
	}
	return row
}

// renderFor is how a kind's answers are shown: sanitized markdown, except
// for math, whose working (200*40*.01, "#### 160") markdown would turn into
// emphasis and headings: it is shown as the text it is.
func renderFor(kind assay.Kind) func(string) string {
	if kind == assay.KindMath {
		return plainText
	}
	return responseMarkdown.render
}

// plainText is text as HTML: escaped, its lines kept.
func plainText(s string) string {
	return `<div class="plain-text">` + stdhtml.EscapeString(s) + `</div>`
}
