package web_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/internal/pgtest"
	"assay/store"
	"assay/tally"
	"assay/web"
)

// browser is a test client that keeps cookies and reads the CSRF token from forms, as a browser does.
type browser struct {
	t    *testing.T
	srv  *httptest.Server
	http *http.Client
	csrf string
}

// openDB opens a new database file that the test closes at its end.
func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := tally.Open(context.Background(), pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newServer(t *testing.T, cfg web.Config) (*browser, *store.DB) {
	t.Helper()
	db := openDB(t)
	s, err := web.New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, srv: srv, http: &http.Client{Jar: jar}}, db
}

// get loads a page and remembers its CSRF token.
func (b *browser) get(path string) (*http.Response, *goquery.Document) {
	b.t.Helper()
	resp, err := b.http.Get(b.srv.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp, b.read(resp)
}

func (b *browser) read(resp *http.Response) *goquery.Document {
	b.t.Helper()
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if tok, ok := doc.Find(`input[name=_csrf]`).Attr("value"); ok {
		b.csrf = tok
	}
	return doc
}

// postForm submits a form with the remembered CSRF token.
func (b *browser) postForm(path string, form url.Values) (*http.Response, *goquery.Document) {
	b.t.Helper()
	if form.Get("_csrf") == "" {
		form.Set("_csrf", b.csrf)
	}
	resp, err := b.http.PostForm(b.srv.URL+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp, b.read(resp)
}

// upload posts a file through the dataset upload form.
func (b *browser) upload(filename string, data []byte, fields map[string]string) (*http.Response, *goquery.Document) {
	b.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("_csrf", b.csrf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("file", filename)
	fw.Write(data)
	mw.Close()
	resp, err := b.http.Post(b.srv.URL+"/datasets", mw.FormDataContentType(), &buf)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp, b.read(resp)
}

func text(doc *goquery.Document, sel string) string {
	return strings.TrimSpace(doc.Find(sel).Text())
}
