package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
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
	files map[string]*asset
}

type asset struct {
	body  []byte
	etag  string // of body
	ctype string

	once sync.Once
	gz   []byte // body gzipped; nil when that saves nothing
}

func newAssets(files fs.FS) (*assets, error) {
	a := &assets{files: map[string]*asset{}}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		a.files[name] = &asset{body: body, etag: hex.EncodeToString(sum[:12]),
			ctype: mime.TypeByExtension(path.Ext(name))}
		return nil
	})
	return a, err
}

// gzipped returns the file gzipped, or nil when gzip does not make it smaller.
func (f *asset) gzipped() []byte {
	f.once.Do(func() {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		w.Write(f.body)
		w.Close()
		if b.Len() < len(f.body)*9/10 {
			f.gz = b.Bytes()
		}
	})
	return f.gz
}

// serve answers GET and HEAD /static/NAME.
func (a *assets) serve(c echo.Context) error {
	f, ok := a.files[c.Param("*")]
	if !ok {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	if f.ctype != "" {
		h.Set("Content-Type", f.ctype)
	}
	body, etag := f.body, f.etag
	if acceptsGzip(c.Request()) {
		if gz := f.gzipped(); gz != nil {
			body, etag = gz, f.etag+"-gz"
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("ETag", `"`+etag+`"`)
	http.ServeContent(c.Response(), c.Request(), "", time.Time{}, bytes.NewReader(body))
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
