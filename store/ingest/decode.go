package ingest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"assay"
)

// record is one row of a dataset file before it becomes a sample.
type record struct {
	where  string         // "line 3", "item 2 (line 5)" or "row 2 (line 3)"
	seq    int            // the fallback sample id: JSONL line, JSON item, CSV data row
	fields map[string]any // string, json.Number, bool, nil, []any or map[string]any
	end    int            // the offset in the text past the record
}

// records are a file's records, decoded one at a time, in order; a bad
// one ends them with its error. A file is read twice (records.survey, then
// its samples) rather than held whole as records: 100,000 of them took
// 100 MB.
type records iter.Seq2[record, error]

// decode reads text in the given format, one record at a time.
func decode(name, format string, text []byte) records {
	switch format {
	case FormatJSON:
		return decodeJSONArray(name, text)
	case FormatCSV:
		return decodeCSV(name, text)
	}
	return decodeJSONL(name, text)
}

// releaseEvery is how far a mapped file is read before the pages behind
// are given back.
const releaseEvery = 4 << 20

// releasing gives release the offset reached every releaseEvery bytes of
// records, and the text's end once they are all read.
func (rs records) releasing(release func(end int), size int) records {
	return func(yield func(record, error) bool) {
		last := 0
		for r, err := range rs {
			if !yield(r, err) {
				return
			}
			if r.end-last >= releaseEvery {
				release(r.end)
				last = r.end
			}
		}
		release(size)
	}
}

// noRecords is the error of a file without a record.
func noRecords(name, format string) error {
	if format == FormatCSV {
		return assay.Errorf(assay.EINVALID, "%s: line 1: the file has a header row but no samples", name)
	}
	return assay.Errorf(assay.EINVALID, "%s: line 1: the JSON array is empty; the file has no samples", name)
}

// decodeJSONL reads one object per line; blank lines are skipped but counted.
func decodeJSONL(name string, text []byte) records {
	return func(yield func(record, error) bool) {
		first, left := true, text
		for i := 1; len(left) > 0; i++ {
			here := left
			line, rest, _ := bytes.Cut(left, []byte("\n"))
			left = rest
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			where := fmt.Sprintf("line %d", i)
			v, err := decodeValue(line)
			if err != nil {
				if first && json.Valid(here) {
					yield(record{}, assay.Errorf(assay.EINVALID, "%s: %s: the file is a single JSON value; want one object per line (JSONL) or a JSON array of objects", name, where))
					return
				}
				yield(record{}, assay.Errorf(assay.EINVALID, "%s: %s: not valid JSON: %s", name, where, describeJSONError(err)))
				return
			}
			obj, ok := v.(map[string]any)
			if !ok {
				yield(record{}, assay.Errorf(assay.EINVALID, "%s: %s: is %s, want a JSON object", name, where, describe(v)))
				return
			}
			first = false
			if !yield(record{where: where, seq: i, fields: obj, end: len(text) - len(left)}, nil) {
				return
			}
		}
	}
}

// decodeValue decodes exactly one JSON value, keeping numbers as json.Number.
func decodeValue(s []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(s))
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
func decodeJSONArray(name string, text []byte) records {
	return func(yield func(record, error) bool) {
		fail := func(format string, args ...any) {
			yield(record{}, assay.Errorf(assay.EINVALID, "%s: "+format, append([]any{name}, args...)...))
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			fail("line 1: want a JSON array of objects")
			return
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
				fail("%s: not valid JSON: %s", where, describeJSONError(err))
				return
			}
			obj, ok := v.(map[string]any)
			if !ok {
				fail("%s: is %s, want a JSON object", where, describe(v))
				return
			}
			if !yield(record{where: where, seq: i, fields: obj, end: int(dec.InputOffset())}, nil) {
				return
			}
		}
		if _, err := dec.Token(); err != nil {
			line := lineAt(text, skipSeparators(text, int(dec.InputOffset())))
			fail("line %d: not valid JSON: %s", line, describeJSONError(err))
			return
		}
		if _, err := dec.Token(); err != io.EOF {
			line := lineAt(text, skipSeparators(text, int(dec.InputOffset())))
			fail("line %d: unexpected text after the JSON array", line)
		}
	}
}

// errorLine is the line of the syntax error in the JSON value that starts
// at off. A stream decoder's offsets leave out what its Token calls read,
// so the value is decoded again on its own.
func errorLine(text []byte, off int) (int, bool) {
	var v any
	var syn *json.SyntaxError
	if err := json.NewDecoder(bytes.NewReader(text[off:])).Decode(&v); !errors.As(err, &syn) {
		return 0, false
	}
	return lineAt(text, off+int(syn.Offset)), true
}

// lineCounter finds the line of offsets that only grow, counting each
// newline once: asking lineAt for every item of a JSON array went over the
// file again for each, quadratic in its size.
type lineCounter struct {
	text []byte
	off  int // counted up to here
	line int // the line at off
}

func (l *lineCounter) at(off int) int {
	off = min(off, len(l.text))
	if off < l.off {
		return lineAt(l.text, off)
	}
	l.line += bytes.Count(l.text[l.off:off], []byte("\n"))
	l.off = off
	return l.line
}

// skipSeparators returns the offset of the first byte at or after off that is
// not JSON whitespace or a comma, so that errors point at the item itself.
func skipSeparators(text []byte, off int) int {
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
func decodeCSV(name string, text []byte) records {
	return func(yield func(record, error) bool) {
		r := csv.NewReader(bytes.NewReader(text))
		r.FieldsPerRecord = -1 // checked below, to say how many fields a row has
		header, err := r.Read()
		if err != nil {
			yield(record{}, csvError(name, err))
			return
		}
		if err := checkHeader(name, header); err != nil {
			yield(record{}, err)
			return
		}
		for row := 1; ; row++ {
			rec, err := r.Read()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(record{}, csvError(name, err))
				return
			}
			line, _ := r.FieldPos(0)
			if len(rec) != len(header) {
				yield(record{}, assay.Errorf(assay.EINVALID, "%s: row %d (line %d): has %d fields, the header has %d",
					name, row, line, len(rec), len(header)))
				return
			}
			fields := make(map[string]any, len(header))
			for i, h := range header {
				fields[strings.TrimSpace(h)] = rec[i]
			}
			where := fmt.Sprintf("row %d (line %d)", row, line)
			if !yield(record{where: where, seq: row, fields: fields, end: int(r.InputOffset())}, nil) {
				return
			}
		}
	}
}

// checkHeader rejects unnamed and repeated column names.
func checkHeader(name string, header []string) error {
	seen := make(map[string]int, len(header))
	for i, h := range header {
		h = strings.TrimSpace(h)
		if h == "" {
			return assay.Errorf(assay.EINVALID, "%s: header (line 1): column %d has no name; the first row must name every column", name, i+1)
		}
		if j, dup := seen[h]; dup {
			return assay.Errorf(assay.EINVALID, "%s: header (line 1): columns %d and %d are both named %q", name, j+1, i+1, h)
		}
		seen[h] = i
	}
	return nil
}

// csvError names the line and column of a CSV syntax error.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return assay.Errorf(assay.EINVALID, "%s: not valid CSV: %v", name, err)
	}
	if pe.StartLine != pe.Line {
		return assay.Errorf(assay.EINVALID, "%s: line %d, column %d: not valid CSV (in the row that starts on line %d): %v",
			name, pe.Line, pe.Column, pe.StartLine, pe.Err)
	}
	return assay.Errorf(assay.EINVALID, "%s: line %d, column %d: not valid CSV: %v", name, pe.Line, pe.Column, pe.Err)
}
