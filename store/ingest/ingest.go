// Package ingest parses an uploaded dataset file (JSONL, a JSON array or CSV)
// into samples, detecting its kind from the fields. Bad input never partially
// succeeds: Parse returns every sample or a *store.Error that names the file,
// the line (or array item, or CSV row) and the field at fault.
package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"iter"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"assay"
	"assay/store"
)

// DefaultMaxBytes is the size limit used when Options.MaxBytes is 0.
const DefaultMaxBytes = 64 << 20

// Options says how to read a dataset file. The zero value detects everything.
type Options struct {
	Filename    string     // used in error messages and to sniff the format (.jsonl, .json, .csv); content sniffing when the extension is unknown
	Kind        assay.Kind // "" = detect
	QuestionKey string     // "" = auto (question, prompt, input, ...)
	AnswerKey   string     // "" = auto (answer, response, reference, ...)
	MaxBytes    int64      // 0 = 64 MiB

	// release, when set, is given the offset in the data up to which it
	// was read, as it is read: ImportFile gives the mapped file's pages
	// back there.
	release func(upTo int)
}

// Parsed is a dataset file read into samples.
type Parsed struct {
	Kind                   assay.Kind
	Format                 string // "jsonl", "json" or "csv"
	SHA256                 string // hex of the raw bytes
	QuestionKey, AnswerKey string // the keys actually used (qa, math and mcq; empty for code, whose fields are fixed)
	Samples                []store.Sample
}

// The formats Parse reads.
const (
	FormatJSONL = "jsonl"
	FormatJSON  = "json"
	FormatCSV   = "csv"
)

var utf8BOM = []byte("\xef\xbb\xbf")

// Parse reads data as a dataset file and returns all its samples, or an error
// (a *store.Error with code EINVALID or ETOOLARGE) and no samples.
func Parse(data []byte, opts Options) (*Parsed, error) {
	src, err := read(data, opts)
	if err != nil {
		return nil, err
	}
	p := src.Parsed
	p.Samples = make([]store.Sample, 0, src.count)
	for s, err := range src.samples {
		if err != nil {
			return nil, err
		}
		p.Samples = append(p.Samples, s)
	}
	return &p, nil
}

// source is a dataset file decoded, its kind and keys settled, whose
// samples are made one at a time: Parsed without Samples, count of them.
type source struct {
	Parsed
	count   int
	samples iter.Seq2[store.Sample, error]
}

// read decodes data and settles how its records become samples.
func read(data []byte, opts Options) (*source, error) {
	name := opts.Filename
	if name == "" {
		name = "dataset"
	}
	if opts.Kind != "" && !opts.Kind.Valid() {
		return nil, assay.Errorf(assay.EINVALID, "%s: unknown kind %q: want qa, mcq, math or code", name, opts.Kind)
	}
	text, err := checkBytes(name, data, opts.MaxBytes)
	if err != nil {
		return nil, err
	}
	release := func(int) {}
	if opts.release != nil {
		release = opts.release
	}
	release(len(data)) // checkBytes read it all
	bom := len(data) - len(text)
	if what, ok := notADataset[strings.ToLower(filepath.Ext(name))]; ok {
		return nil, assay.Errorf(assay.EINVALID, "%s: a dataset is JSONL (one JSON object per line), a JSON array of objects, "+
			"or CSV with a header row; this is %s", name, what)
	}
	format := sniffFormat(name, text)
	rs := decode(name, format, text).releasing(func(end int) { release(bom + end) }, len(text))
	sv, err := rs.survey(name, format, opts.AnswerKey)
	if err != nil {
		return nil, err
	}
	b, err := settle(name, sv, opts)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	release(len(data))
	return &source{
		Parsed: Parsed{Kind: b.kind, Format: format, SHA256: hex.EncodeToString(sum[:]), QuestionKey: b.qKey, AnswerKey: b.aKey},
		count:  sv.count, samples: b.samples(rs),
	}, nil
}

// checkBytes rejects files that are too large, binary or empty, and returns
// the text without its byte order mark: the bytes themselves, not a copy
// (a file read twice, as records, is still held once).
func checkBytes(name string, data []byte, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if int64(len(data)) > limit {
		return nil, assay.Errorf(assay.ETOOLARGE, "%s: the file is %s MiB, over the %s MiB limit",
			name, mib(int64(len(data))), mib(limit))
	}
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return nil, assay.Errorf(assay.EINVALID, "%s: line 1: the file is UTF-16; save it as UTF-8", name)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, assay.Errorf(assay.EINVALID, "%s: line %d: the file looks binary (a NUL byte at byte %d), not JSONL, JSON or CSV text",
			name, lineAt(data, i), i+1)
	}
	if !utf8.Valid(data) {
		i := firstInvalidUTF8(data)
		return nil, assay.Errorf(assay.EINVALID, "%s: line %d: the file looks binary (invalid UTF-8 at byte %d), not JSONL, JSON or CSV text",
			name, lineAt(data, i), i+1)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, assay.Errorf(assay.EINVALID, "%s: the file is empty", name)
	}
	return data, nil
}

// notADataset are files people upload by mistake, by extension, with what
// they are and, for a run file, where it goes.
var notADataset = map[string]string{
	".yaml":     "YAML — a run file goes to assay run --config",
	".yml":      "YAML — a run file goes to assay run --config",
	".md":       "markdown",
	".markdown": "markdown",
	".tsv":      "tab-separated: save it as CSV",
	".xlsx":     "a spreadsheet: save it as CSV",
	".xls":      "a spreadsheet: save it as CSV",
	".parquet":  "Parquet: convert it to JSONL",
	".pdf":      "a PDF",
	".html":     "HTML",
	".zip":      "an archive: upload the file inside",
	".gz":       "compressed: upload the file uncompressed",
}

// sniffFormat picks the format from the file name, then from the content:
// a .csv file is CSV; text that starts with '[' is a JSON array and with '{'
// is JSONL (so a .json file of one object per line still reads).
func sniffFormat(name string, text []byte) string {
	ext := strings.ToLower(filepath.Ext(name))
	if ext == ".csv" {
		return FormatCSV
	}
	switch bytes.TrimLeft(text, " \t\r\n")[0] {
	case '[':
		return FormatJSON
	case '{':
		return FormatJSONL
	}
	switch ext {
	case ".json":
		return FormatJSON
	case ".jsonl", ".ndjson":
		return FormatJSONL
	}
	return FormatCSV
}

// lineAt returns the 1-based line number of byte offset off in data.
func lineAt[T string | []byte](data T, off int) int {
	off = min(off, len(data))
	n := 1
	for i := 0; i < off; i++ {
		if data[i] == '\n' {
			n++
		}
	}
	return n
}

// firstInvalidUTF8 returns the offset of the first byte that is not valid UTF-8.
func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// mib formats n bytes in MiB with at most two decimals.
func mib(n int64) string {
	s := strconv.FormatFloat(float64(n)/(1<<20), 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "0" && n > 0 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'g', 2, 64)
	}
	return s
}
