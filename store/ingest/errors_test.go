package ingest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"assay"
)

const (
	qaRow   = `{"question": "q", "answer": "a"}`
	codeRow = `{"task_id": "T/0", "prompt": "def f():\n", "canonical_solution": "  return 1\n", "test": "def check(c): pass", "entry_point": "f"}`
	mcqRow  = `{"question": "q", "choices": ["a", "b", "c", "d"], "answer": "A"}`
)

func lines(rows ...string) string { return strings.Join(rows, "\n") + "\n" }

func TestParseRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		file string
		data string
		opts Options
		code string   // store.EINVALID unless set
		want []string // substrings of the message, after "<file>: "
	}{
		{name: "empty", file: "q.jsonl", data: "", want: []string{"the file is empty"}},
		{name: "only whitespace", file: "q.jsonl", data: " \r\n\t\n", want: []string{"the file is empty"}},
		{name: "only a BOM", file: "q.csv", data: "\ufeff\n", want: []string{"the file is empty"}},
		{name: "non-JSON line", file: "questions.jsonl", data: lines(qaRow, qaRow, "question: what?"),
			want: []string{"line 3: not valid JSON: invalid character"}},
		{name: "cut-off line", file: "q.jsonl", data: lines(qaRow, `{"question": "q", "answer": "a`),
			want: []string{"line 2: not valid JSON: the value ends too early"}},
		{name: "two objects on a line", file: "q.jsonl", data: lines(qaRow + " " + qaRow),
			want: []string{"line 1: not valid JSON: unexpected text after the value"}},
		{name: "one pretty-printed object", file: "q.json", data: "{\n  \"question\": \"q\",\n  \"answer\": \"a\"\n}\n",
			want: []string{"line 1: the file is a single JSON value"}},
		{name: "JSONL value not an object", file: "q.jsonl", data: lines(qaRow, `["q", "a"]`),
			want: []string{"line 2: is a JSON array, want a JSON object"}},
		{name: "array item not an object", file: "q.json", data: "[\n" + qaRow + ",\n\"q\"\n]",
			want: []string{"item 2 (line 3): is a string, want a JSON object"}},
		{name: "JSON not an array", file: "q.json", data: `"hello"`, want: []string{"line 1: want a JSON array of objects"}},
		{name: "empty JSON array", file: "q.json", data: "[ ]", want: []string{"line 1: the JSON array is empty"}},
		{name: "bad JSON in array", file: "q.json", data: "[\n" + qaRow + ",\n{\"question\": }\n]",
			want: []string{"item 2 (line 3): not valid JSON"}},
		{name: "text after the array", file: "q.json", data: "[" + qaRow + "]\n[]",
			want: []string{"line 2: unexpected text after the JSON array"}},
		{name: "no question field", file: "q.jsonl", data: lines(`{"answer": "a"}`),
			want: []string{"line 1: no question field (looked for question, prompt", "one of the fields: answer"}},
		{name: "no answer field", file: "q.jsonl", data: lines(`{"question": "q"}`),
			want: []string{"line 1: no answer field (looked for answer, response"}},
		{name: "later row missing question", file: "q.jsonl", data: lines(qaRow, `{"answer": "a"}`),
			want: []string{`line 2: missing "question" (the question key); this sample has: answer`}},
		{name: "later row missing answer", file: "q.jsonl", data: lines(qaRow, qaRow, `{"question": "q"}`),
			want: []string{`line 3: missing "answer" (the answer key)`}},
		{name: "given key missing", file: "q.jsonl", data: lines(qaRow), opts: Options{QuestionKey: "prompt"},
			want: []string{`line 1: missing "prompt" (the question key); this sample has: answer, question`}},
		{name: "same key twice", file: "q.jsonl", data: lines(qaRow), opts: Options{QuestionKey: "question", AnswerKey: "question"},
			want: []string{`the question key and the answer key are both "question"`}},
		{name: "empty answer", file: "q.jsonl", data: lines(qaRow, `{"question": "q", "answer": "  "}`),
			want: []string{`line 2: "answer" is empty`}},
		{name: "question is a number", file: "q.jsonl", data: lines(qaRow, `{"question": 42, "answer": "a"}`),
			want: []string{`line 2: "question" is a number, want a string`}},
		{name: "question is null", file: "q.json", data: "[" + qaRow + ",\n" + `{"question": null, "answer": "a"}]`,
			want: []string{`item 2 (line 2): "question" is null, want a string`}},
		{name: "answer is a list", file: "q.jsonl", data: lines(`{"question": "q", "answer": ["a"]}`),
			want: []string{`line 1: "answer" is a JSON array, want a string`}},
		{name: "mcq answer E", file: "mmlu.jsonl", data: lines(mcqRow, strings.Replace(mcqRow, `"A"`, `"E"`, 1)),
			want: []string{`line 2: "answer" is "E", want a letter A–D or an index 0–3`}},
		{name: "mcq answer index 4", file: "mmlu.jsonl", data: lines(strings.Replace(mcqRow, `"A"`, `4`, 1)),
			want: []string{`line 1: "answer" is 4, want a letter A–D`}},
		{name: "mcq answer true", file: "mmlu.jsonl", data: lines(strings.Replace(mcqRow, `"A"`, `true`, 1)),
			want: []string{`line 1: "answer" is a boolean, want a letter A–D`}},
		{name: "mcq csv answer E", file: "mmlu.csv", data: "question,A,B,C,D,answer\nq,a,b,c,d,A\nq,a,b,c,d,E\n",
			want: []string{`row 2 (line 3): "answer" is "E"`}},
		{name: "mcq three choices", file: "mmlu.jsonl", data: lines(mcqRow, `{"question": "q", "choices": ["a", "b", "c"], "answer": "A"}`),
			want: []string{`line 2: "choices" has 3 items, want 4 (for A to D)`}},
		{name: "mcq choice not a string", file: "mmlu.jsonl", data: lines(`{"question": "q", "choices": ["a", 2, "c", "d"], "answer": "A"}`),
			want: []string{`line 1: "choices" item 2 is a number, want a string`}},
		{name: "mcq choices not a list", file: "mmlu.jsonl", data: lines(`{"question": "q", "choices": "a|b|c|d", "answer": "A"}`),
			want: []string{`line 1: "choices" is a string, want a list of 4 strings`}},
		{name: "mcq row without choices", file: "mmlu.jsonl", data: lines(mcqRow, qaRow),
			want: []string{`line 2: missing "choices" (a list of 4 strings) or the fields A, B, C and D`}},
		{name: "duplicate ids", file: "q.jsonl", data: lines(`{"id": "a", "question": "q", "answer": "a"}`, `{"id": "b", "question": "q", "answer": "a"}`, `{"id": "a", "question": "q", "answer": "a"}`),
			want: []string{`line 3: duplicate sample id "a", first seen at line 1`}},
		{name: "duplicate numeric ids in CSV", file: "q.csv", data: "id,question,answer\n1,q,a\n2,q,a\n1,q,a\n",
			want: []string{`row 3 (line 4): duplicate sample id "1", first seen at row 1 (line 2)`}},
		{name: "one number written two ways", file: "q.jsonl", data: lines(`{"id": 1, "question": "q", "answer": "a"}`, `{"id": 1.0, "question": "q", "answer": "a"}`),
			want: []string{`line 2: duplicate sample id "1", first seen at line 1`}},
		{name: "a number and its string", file: "q.jsonl", data: lines(`{"id": "10", "question": "q", "answer": "a"}`, `{"id": 1e1, "question": "q", "answer": "a"}`),
			want: []string{`line 2: duplicate sample id "10", first seen at line 1`}},
		{name: "duplicate task ids", file: "he.jsonl", data: lines(codeRow, codeRow),
			want: []string{`line 2: duplicate sample id "T/0", first seen at line 1`}},
		{name: "row without the id others have", file: "q.jsonl", data: lines(`{"id": 1, "question": "q", "answer": "a"}`, qaRow),
			want: []string{`line 2: missing "id" (the first sample has one, so every sample needs one)`}},
		{name: "id of the wrong type", file: "q.jsonl", data: lines(`{"id": {"n": 1}, "question": "q", "answer": "a"}`),
			want: []string{`line 1: "id" is a JSON object, want a string or a number`}},
		{name: "NUL byte", file: "q.jsonl", data: qaRow + "\n\x00\x01\x02", want: []string{"line 2: the file looks binary (a NUL byte at byte 34)"}},
		{name: "invalid UTF-8", file: "q.csv", data: "question,answer\nq,\xff\xfe\xfd\n", want: []string{"line 2: the file looks binary (invalid UTF-8 at byte 19)"}},
		{name: "UTF-16", file: "q.jsonl", data: "\xff\xfe{\x00", want: []string{"line 1: the file is UTF-16; save it as UTF-8"}},
		{name: "too large", file: "big.jsonl", data: strings.Repeat(qaRow+"\n", 32<<10), opts: Options{MaxBytes: 1 << 20},
			code: assay.ETOOLARGE, want: []string{"the file is 1.03 MiB, over the 1 MiB limit"}},
		{name: "code row missing test", file: "he.jsonl", data: lines(codeRow, strings.Replace(strings.Replace(codeRow, `"test": "def check(c): pass", `, "", 1), "T/0", "T/1", 1)),
			want: []string{`line 2: missing "test" (a code sample needs prompt, canonical_solution, test and entry_point)`}},
		{name: "code row missing entry_point", file: "he.jsonl", data: lines(`{"task_id": "T/0", "prompt": "p", "canonical_solution": "s", "test": "t"}`),
			want: []string{`line 1: missing "entry_point" (a code sample needs`}},
		{name: "code forced on qa data", file: "q.jsonl", data: lines(qaRow), opts: Options{Kind: assay.KindCode},
			want: []string{`line 1: missing "prompt" (a code sample needs`}},
		{name: "math forced without final number", file: "gsm.jsonl", data: lines(qaRow), opts: Options{Kind: assay.KindMath},
			want: []string{`line 1: "answer" does not end with a line "#### N"`}},
		{name: "unknown kind", file: "q.jsonl", data: lines(qaRow), opts: Options{Kind: "essay"},
			want: []string{`unknown kind "essay": want qa, mcq, math or code`}},
		{name: "CSV row with too few fields", file: "q.csv", data: "question,answer,topic\nq,a,t\nq,a\n",
			want: []string{"row 2 (line 3): has 2 fields, the header has 3"}},
		{name: "a run file", file: "run.yaml", data: "name: x\nagent: {model: m}\n", want: []string{"run.yaml: a dataset is JSONL", "this is YAML — a run file goes to assay run --config"}},
		{name: "markdown", file: "notes.md", data: "# Notes\n\nsome text\n", want: []string{"notes.md: a dataset is JSONL", "CSV with a header row; this is markdown"}},
		{name: "CSV bad quote", file: "q.csv", data: "question,answer\n\"q,a\n", want: []string{`line 2, column 6: not valid CSV: extraneous or missing " in quoted-field`}},
		{name: "CSV duplicate column", file: "q.csv", data: "question,answer,answer\nq,a,b\n",
			want: []string{`header (line 1): columns 2 and 3 are both named "answer"`}},
		{name: "CSV header only", file: "q.csv", data: "question,answer\r\n", want: []string{"line 1: the file has a header row but no samples"}},
		{name: "CSV without a question column", file: "mmlu.csv", data: "What is 2+2?,3,4,5,6,B\nWhat is 2+3?,3,4,5,6,C\n",
			want: []string{"header (line 1): no question field", "the first row must be a header"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Filename = tt.file
			p, err := Parse([]byte(tt.data), tt.opts)
			if err == nil {
				t.Fatalf("Parse succeeded with %d samples, want an error", len(p.Samples))
			}
			if p != nil {
				t.Errorf("Parse returned samples with its error")
			}
			var se *assay.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T %q is not a *store.Error", err, err)
			}
			code := tt.code
			if code == "" {
				code = assay.EINVALID
			}
			if se.Code != code {
				t.Errorf("code %q, want %q", se.Code, code)
			}
			msg := assay.ErrorMessage(err)
			t.Log(msg)
			if !strings.HasPrefix(msg, tt.file+": ") {
				t.Errorf("message %q does not start with the file name", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q\nwant it to contain %q", msg, w)
				}
			}
		})
	}
}

func TestParseDefaultSizeLimit(t *testing.T) {
	data := bytes.Repeat([]byte("a"), DefaultMaxBytes+1)
	_, err := Parse(data, Options{Filename: "big.csv"})
	if assay.ErrorCode(err) != assay.ETOOLARGE || !strings.Contains(assay.ErrorMessage(err), "over the 64 MiB limit") {
		t.Fatalf("got %v, want a too_large error naming the 64 MiB limit", err)
	}
}
