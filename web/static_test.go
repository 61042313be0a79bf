package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"testing"

	"assay/static"
	"assay/web"
)

// The embedded assets are kept by the browser and asked for again with
// their ETag, which gets a 304 without the body; a browser that takes gzip
// gets them gzipped, to the same bytes once unzipped.
func TestStaticAssetsAreRevalidatedAndGzipped(t *testing.T) {
	b, _ := newServer(t, web.Config{})
	want, err := fs.ReadFile(static.FS, "echarts.min.js")
	if err != nil {
		t.Fatal(err)
	}
	get := func(method, name, encoding, etag string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, b.srv.URL+"/static/"+name, nil)
		req.Header.Set("Accept-Encoding", encoding) // set, so that the client leaves the body as sent
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}

	resp, body := get("GET", "echarts.min.js", "gzip, deflate, br", "")
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" || etag == "" ||
		resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip: %d %v", resp.StatusCode, resp.Header)
	}
	if len(body) > len(want)/2 {
		t.Errorf("gzipped, echarts.min.js is %d bytes of %d", len(body), len(want))
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if unzipped, err := io.ReadAll(zr); err != nil || !bytes.Equal(unzipped, want) {
		t.Errorf("unzipped: %d bytes (%v), want the embedded %d", len(unzipped), err, len(want))
	}
	if resp, body := get("GET", "echarts.min.js", "gzip", etag); resp.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("asked again with its ETag: %d, %d bytes; want 304 and none", resp.StatusCode, len(body))
	}

	resp, body = get("GET", "echarts.min.js", "identity", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, want) ||
		resp.Header.Get("ETag") == etag || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("without gzip: %d, %d bytes, %v", resp.StatusCode, len(body), resp.Header)
	}
	if resp, body := get("GET", "echarts.min.js", "identity", etag); resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
		t.Errorf("the gzipped file's ETag asked for without gzip: %d, %d bytes; want the file", resp.StatusCode, len(body))
	}
	if resp, body := get("HEAD", "app.css", "", ""); resp.StatusCode != http.StatusOK || len(body) != 0 ||
		resp.Header.Get("Content-Type") != "text/css; charset=utf-8" {
		t.Errorf("HEAD app.css: %d, %d bytes, %v", resp.StatusCode, len(body), resp.Header)
	}
	for _, name := range []string{"missing.js", "../static/static.go", "static.go"} {
		if resp, _ := get("GET", name, "", ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", name, resp.StatusCode)
		}
	}
}
