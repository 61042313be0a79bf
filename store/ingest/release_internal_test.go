package ingest

import (
	"strings"
	"testing"
)

// Reading a file gives back the offsets it reached, growing, each past a
// whole record, and the file's end last.
func TestRecordsGiveTheOffsetsTheyReached(t *testing.T) {
	for _, c := range []struct{ format, text string }{
		{FormatJSONL, `{"question": "a?", "answer": "1"}` + "\n\n" + `{"question": "b?", "answer": "2"}` + "\n" + `{"question": "c?", "answer": "3"}`},
		{FormatJSON, `[{"question": "a?", "answer": "1"},` + "\n" + ` {"question": "b?", "answer": "2"}, {"question": "c?", "answer": "3"}]` + "\n"},
		{FormatCSV, "question,answer\na?,1\n\"b,\nb?\",2\nc?,3\n"},
	} {
		var ends []int
		for r, err := range decode("f", c.format, []byte(c.text)) {
			if err != nil {
				t.Fatalf("%s: %v", c.format, err)
			}
			ends = append(ends, r.end)
		}
		if len(ends) != 3 {
			t.Fatalf("%s: %d records", c.format, len(ends))
		}
		for i, end := range ends {
			// Every record ends before the offset given, and the next starts after it.
			before := c.text[:end]
			if strings.Count(before, "?") != i+1 {
				t.Errorf("%s: record %d ends at %d, after %d questions: %q", c.format, i+1, end, strings.Count(before, "?"), before)
			}
		}
		var released []int
		for range decode("f", c.format, []byte(c.text)).releasing(func(n int) { released = append(released, n) }, len(c.text)) {
		}
		if len(released) == 0 || released[len(released)-1] != len(c.text) {
			t.Errorf("%s: released %v, want the end (%d) last", c.format, released, len(c.text))
		}
	}
}
