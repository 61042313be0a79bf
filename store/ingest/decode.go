package ingest

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"assay/store"
)

// record is one row of a dataset file before it becomes a sample.
type record struct {
	where  string         // "line 3", "item 2 (line 5)" or "row 2 (line 3)"
	seq    int            // the fallback sample id: JSONL line, JSON item, CSV data row
	fields map[string]any // string, json.Number, bool, nil, []any or map[string]any
}

// table is a decoded file.
type table struct {
	format  string
	records []record
}

// decode reads text in the given format into at least one record.
func decode(name, format, text string) (*table, error) {
	var (
		t   *table
		err error
	)
	switch format {
	case FormatJSON:
		t, err = decodeJSONArray(name, text)
	case FormatCSV:
		t, err = decodeCSV(name, text)
	default:
		t, err = decodeJSONL(name, text)
	}
	if err != nil {
		return nil, err
	}
	if len(t.records) == 0 && format == FormatCSV {
		return nil, store.Errorf(store.EINVALID, "%s: line 1: the file has a header row but no samples", name)
	}
	if len(t.records) == 0 {
		return nil, store.Errorf(store.EINVALID, "%s: line 1: the JSON array is empty; the file has no samples", name)
	}
	return t, nil
}

// decodeJSONL reads one object per line; blank lines are skipped but counted.
func decodeJSONL(name, text string) (*table, error) {
	t := &table{format: FormatJSONL}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		where := fmt.Sprintf("line %d", i+1)
		v, err := decodeValue(line)
		if err != nil {
			if len(t.records) == 0 && json.Valid([]byte(text)) {
				return nil, store.Errorf(store.EINVALID, "%s: %s: the file is a single JSON value; want one object per line (JSONL) or a JSON array of objects", name, where)
			}
			return nil, store.Errorf(store.EINVALID, "%s: %s: not valid JSON: %s", name, where, describeJSONError(err))
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, store.Errorf(store.EINVALID, "%s: %s: is %s, want a JSON object", name, where, describe(v))
		}
		t.records = append(t.records, record{where: where, seq: i + 1, fields: obj})
	}
	return t, nil
}

// decodeValue decodes exactly one JSON value, keeping numbers as json.Number.
func decodeValue(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected text after the value")
	}
	return v, nil
}

// decodeJSONArray reads a JSON array of objects, noting the line each starts on.
func decodeJSONArray(name, text string) (*table, error) {
	t := &table{format: FormatJSON}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, store.Errorf(store.EINVALID, "%s: line 1: want a JSON array of objects", name)
	}
	lines := &lineCounter{text: text, line: 1}
	for i := 1; dec.More(); i++ {
		off := skipSeparators(text, int(dec.InputOffset()))
		where := fmt.Sprintf("item %d (line %d)", i, lines.at(off))
		var v any
		if err := dec.Decode(&v); err != nil {
			if line, ok := errorLine(text, off); ok {
				where = fmt.Sprintf("item %d (line %d)", i, line)
			}
			return nil, store.Errorf(store.EINVALID, "%s: %s: not valid JSON: %s", name, where, describeJSONError(err))
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, store.Errorf(store.EINVALID, "%s: %s: is %s, want a JSON object", name, where, describe(v))
		}
		t.records = append(t.records, record{where: where, seq: i, fields: obj})
	}
	if _, err := dec.Token(); err != nil {
		line := lineAt(text, skipSeparators(text, int(dec.InputOffset())))
		return nil, store.Errorf(store.EINVALID, "%s: line %d: not valid JSON: %s", name, line, describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		line := lineAt(text, skipSeparators(text, int(dec.InputOffset())))
		return nil, store.Errorf(store.EINVALID, "%s: line %d: unexpected text after the JSON array", name, line)
	}
	return t, nil
}

// errorLine is the line of the syntax error in the JSON value that starts
// at off. A stream decoder's offsets leave out what its Token calls read,
// so the value is decoded again on its own.
func errorLine(text string, off int) (int, bool) {
	var v any
	var syn *json.SyntaxError
	if err := json.NewDecoder(strings.NewReader(text[off:])).Decode(&v); !errors.As(err, &syn) {
		return 0, false
	}
	return lineAt(text, off+int(syn.Offset)), true
}

// lineCounter finds the line of offsets that only grow, counting each
// newline once: asking lineAt for every item of a JSON array went over the
// file again for each, quadratic in its size.
type lineCounter struct {
	text string
	off  int // counted up to here
	line int // the line at off
}

func (l *lineCounter) at(off int) int {
	off = min(off, len(l.text))
	if off < l.off {
		return lineAt(l.text, off)
	}
	l.line += strings.Count(l.text[l.off:off], "\n")
	l.off = off
	return l.line
}

// skipSeparators returns the offset of the first byte at or after off that is
// not JSON whitespace or a comma, so that errors point at the item itself.
func skipSeparators(text string, off int) int {
	for off < len(text) && strings.IndexByte(" \t\r\n,", text[off]) >= 0 {
		off++
	}
	return off
}

// describeJSONError words a decoding error for a user; a truncated value is the common case.
func describeJSONError(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "the value ends too early (a missing closing quote or brace?)"
	}
	return err.Error()
}

// decodeCSV reads CSV whose first row names the columns; every value is a string.
func decodeCSV(name, text string) (*table, error) {
	t := &table{format: FormatCSV}
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1 // checked below, to say how many fields a row has
	header, err := r.Read()
	if err != nil {
		return nil, csvError(name, err)
	}
	if err := checkHeader(name, header); err != nil {
		return nil, err
	}
	for row := 1; ; row++ {
		rec, err := r.Read()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			return nil, store.Errorf(store.EINVALID, "%s: row %d (line %d): has %d fields, the header has %d",
				name, row, line, len(rec), len(header))
		}
		fields := make(map[string]any, len(header))
		for i, h := range header {
			fields[strings.TrimSpace(h)] = rec[i]
		}
		where := fmt.Sprintf("row %d (line %d)", row, line)
		t.records = append(t.records, record{where: where, seq: row, fields: fields})
	}
}

// checkHeader rejects unnamed and repeated column names.
func checkHeader(name string, header []string) error {
	seen := make(map[string]int, len(header))
	for i, h := range header {
		h = strings.TrimSpace(h)
		if h == "" {
			return store.Errorf(store.EINVALID, "%s: header (line 1): column %d has no name; the first row must name every column", name, i+1)
		}
		if j, dup := seen[h]; dup {
			return store.Errorf(store.EINVALID, "%s: header (line 1): columns %d and %d are both named %q", name, j+1, i+1, h)
		}
		seen[h] = i
	}
	return nil
}

// csvError names the line and column of a CSV syntax error.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return store.Errorf(store.EINVALID, "%s: not valid CSV: %v", name, err)
	}
	if pe.StartLine != pe.Line {
		return store.Errorf(store.EINVALID, "%s: line %d, column %d: not valid CSV (in the row that starts on line %d): %v",
			name, pe.Line, pe.Column, pe.StartLine, pe.Err)
	}
	return store.Errorf(store.EINVALID, "%s: line %d, column %d: not valid CSV: %v", name, pe.Line, pe.Column, pe.Err)
}
