package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"assay/static"
)

// assets serves the embedded CSS and JavaScript. Each file has an ETag of
// its content, and the browser is told to keep it and ask again
// (Cache-Control: no-cache): a page of a report then gets echarts.min.js,
// a megabyte, from the browser's cache with a 304, and its compiled code
// with it, instead of downloading and compiling it again on every page.
// A browser that takes gzip gets the file gzipped (a third of echarts'
// size), compressed once, when first asked for.
type assets struct {
	fs    fs.FS
	files map[string]*asset
}

// asset is what is known of an embedded file; its bytes are read from the
// binary as it is served, never copied.
type asset struct {
	etag  string // of the file's bytes
	ctype string

	once sync.Once
	gz   []byte // the file gzipped; nil when that saves little
}

func newAssets(files fs.FS) (*assets, error) {
	a := &assets{fs: files, files: map[string]*asset{}}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := files.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		a.files[name] = &asset{etag: hex.EncodeToString(h.Sum(nil)[:12]), ctype: mime.TypeByExtension(path.Ext(name))}
		return nil
	})
	return a, err
}

// gzipped returns the file gzipped, or nil when gzip saves little.
func (a *assets) gzipped(name string, f *asset) []byte {
	f.once.Do(func() {
		body, err := fs.ReadFile(a.fs, name)
		if err != nil {
			return
		}
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		w.Write(body)
		w.Close()
		if b.Len() < len(body)*9/10 {
			f.gz = b.Bytes()
		}
	})
	return f.gz
}

// serve answers GET and HEAD /static/NAME.
func (a *assets) serve(c echo.Context) error {
	name := c.Param("*")
	f, ok := a.files[name]
	if !ok {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	if f.ctype != "" {
		h.Set("Content-Type", f.ctype)
	}
	if acceptsGzip(c.Request()) {
		if gz := a.gzipped(name, f); gz != nil {
			h.Set("Content-Encoding", "gzip")
			h.Set("ETag", `"`+f.etag+`-gz"`)
			http.ServeContent(c.Response(), c.Request(), "", time.Time{}, bytes.NewReader(gz))
			return nil
		}
	}
	file, err := a.fs.Open(name)
	if err != nil {
		return err
	}
	defer file.Close()
	body, ok := file.(io.ReadSeeker) // an embedded file reads from the binary
	if !ok {
		return fmt.Errorf("static %s cannot seek", name)
	}
	h.Set("ETag", `"`+f.etag+`"`)
	http.ServeContent(c.Response(), c.Request(), "", time.Time{}, body)
	return nil
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			return strings.TrimSpace(q) != "q=0"
		}
	}
	return false
}

// staticAssets are the assets of package static, read once.
var staticAssets = sync.OnceValues(func() (*assets, error) { return newAssets(static.FS) })
