package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"assay"
	"assay/internal/fixture"
	"assay/store"
)

// readDataset reads a file of the project's fixtures (testdata/) or, for
// names under "shared:", of the conformance set in ../shared/datasets.
func readDataset(t *testing.T, name string) []byte {
	t.Helper()
	if shared, ok := strings.CutPrefix(name, "shared:"); ok {
		return fixture.ReadShared(t, shared)
	}
	return fixture.Read(t, name)
}

func mustParse(t *testing.T, data []byte, opts Options) *Parsed {
	t.Helper()
	p, err := Parse(data, opts)
	if err != nil {
		t.Fatalf("Parse(%s): %v", opts.Filename, err)
	}
	return p
}

func TestParseDatasets(t *testing.T) {
	tests := []struct {
		file       string
		opts       Options
		kind       assay.Kind
		count      int
		qKey, aKey string
		first      store.Sample // the fields set here are compared with sample 1
	}{
		{file: "humaneval.jsonl", kind: assay.KindCode, count: 6,
			first: store.Sample{SampleID: "Synth/0", EntryPoint: "add"}},
		{file: "gsm8k.jsonl", kind: assay.KindMath, count: 10, qKey: "question", aKey: "answer",
			first: store.Sample{SampleID: "1"}},
		{file: "mmlu.jsonl", kind: assay.KindMCQ, count: 10, qKey: "question", aKey: "answer",
			first: store.Sample{SampleID: "1", Reference: "B", Choices: []string{"Orinoco", "Amazon", "Paraná", "Magdalena"},
				Metadata: map[string]any{"subject": "geography"}}},
		{file: "keval/golden.jsonl", kind: assay.KindQA, count: 5, qKey: "question", aKey: "answer",
			first: store.Sample{SampleID: "1", Input: "How do I list the pods of a namespace with the ops CLI?"}},
		{file: "keval/one_question.jsonl", kind: assay.KindQA, count: 1, qKey: "question", aKey: "answer",
			first: store.Sample{SampleID: "1"}},
		{file: "keval/simple.jsonl", kind: assay.KindQA, count: 3, qKey: "question", aKey: "answer",
			first: store.Sample{SampleID: "1", Input: "What is the capital of Italy?", Reference: "Rome"}},
		{file: "keval/custom_keys.jsonl", kind: assay.KindQA, count: 3, qKey: "prompt", aKey: "response",
			first: store.Sample{SampleID: "1", Input: "What is the boiling point of ethanol at sea level?"}},
		{file: "keval/custom_keys.jsonl", kind: assay.KindQA, count: 3, qKey: "prompt", aKey: "response",
			opts:  Options{QuestionKey: "prompt", AnswerKey: "response"},
			first: store.Sample{SampleID: "1", Reference: "About 78 degrees Celsius."}},
		{file: "shared:humaneval_sample.jsonl", kind: assay.KindCode, count: 20,
			first: store.Sample{SampleID: "HumanEval/0", EntryPoint: "has_close_elements"}},
		{file: "shared:gsm8k_sample.jsonl", kind: assay.KindMath, count: 50, qKey: "question", aKey: "answer",
			first: store.Sample{SampleID: "1"}},
		{file: "shared:mmlu_sample.jsonl", kind: assay.KindMCQ, count: 50, qKey: "question", aKey: "answer",
			first: store.Sample{SampleID: "1", Reference: "B", Choices: []string{"0", "4", "2", "6"},
				Metadata: map[string]any{"subject": "abstract_algebra"}}},
		{file: "shared:k-eval/golden_sample.jsonl", kind: assay.KindQA, count: 10, qKey: "question", aKey: "answer",
			first: store.Sample{SampleID: "1", Input: "How do I login to a cluster using backplane?"}},
		{file: "shared:k-eval/pre_test1_questions.jsonl", kind: assay.KindQA, count: 1, qKey: "question", aKey: "answer",
			first: store.Sample{SampleID: "1"}},
		{file: "shared:k-eval/fixture_simple_dataset.jsonl", kind: assay.KindQA, count: 3, qKey: "question", aKey: "answer",
			first: store.Sample{SampleID: "1", Input: "What is the capital of France?", Reference: "Paris"}},
		{file: "shared:k-eval/fixture_custom_keys_dataset.jsonl", kind: assay.KindQA, count: 3, qKey: "prompt", aKey: "response",
			first: store.Sample{SampleID: "1", Input: "What is the speed of light?"}},
		{file: "shared:k-eval/fixture_custom_keys_dataset.jsonl", kind: assay.KindQA, count: 3, qKey: "prompt", aKey: "response",
			opts:  Options{QuestionKey: "prompt", AnswerKey: "response"},
			first: store.Sample{SampleID: "1", Reference: "approximately 299,792,458 metres per second"}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.opts.QuestionKey, func(t *testing.T) {
			data := readDataset(t, tt.file)
			tt.opts.Filename = filepath.Base(tt.file)
			p := mustParse(t, data, tt.opts)
			sum := sha256.Sum256(data)
			if p.Kind != tt.kind || len(p.Samples) != tt.count || p.Format != FormatJSONL {
				t.Fatalf("got kind %s, %d samples, format %s; want %s, %d, jsonl", p.Kind, len(p.Samples), p.Format, tt.kind, tt.count)
			}
			if p.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("SHA256 = %s, want the hash of the raw bytes", p.SHA256)
			}
			if p.QuestionKey != tt.qKey || p.AnswerKey != tt.aKey {
				t.Errorf("keys = %q/%q, want %q/%q", p.QuestionKey, p.AnswerKey, tt.qKey, tt.aKey)
			}
			checkFirst(t, p.Samples[0], tt.first)
			for i, s := range p.Samples {
				checkComplete(t, tt.kind, i+1, s)
			}
		})
	}
}

// checkFirst compares the fields that want sets.
func checkFirst(t *testing.T, got, want store.Sample) {
	t.Helper()
	if got.SampleID != want.SampleID {
		t.Errorf("SampleID = %q, want %q", got.SampleID, want.SampleID)
	}
	if want.Input != "" && got.Input != want.Input {
		t.Errorf("Input = %q, want %q", got.Input, want.Input)
	}
	if want.Reference != "" && got.Reference != want.Reference {
		t.Errorf("Reference = %q, want %q", got.Reference, want.Reference)
	}
	if want.EntryPoint != "" && got.EntryPoint != want.EntryPoint {
		t.Errorf("EntryPoint = %q, want %q", got.EntryPoint, want.EntryPoint)
	}
	if want.Choices != nil && !reflect.DeepEqual(got.Choices, want.Choices) {
		t.Errorf("Choices = %q, want %q", got.Choices, want.Choices)
	}
	if want.Metadata != nil && !reflect.DeepEqual(got.Metadata, want.Metadata) {
		t.Errorf("Metadata = %v, want %v", got.Metadata, want.Metadata)
	}
}

// checkComplete checks that sample i has what its kind needs.
func checkComplete(t *testing.T, kind assay.Kind, i int, s store.Sample) {
	t.Helper()
	if s.Ordinal != i || s.SampleID == "" || s.Input == "" || s.Reference == "" || s.Metadata == nil {
		t.Errorf("sample %d incomplete: %+v", i, s)
	}
	switch kind {
	case assay.KindCode:
		if s.Test == "" || s.EntryPoint == "" || len(s.Metadata) != 0 {
			t.Errorf("code sample %d: test %q, entry point %q, metadata %v", i, s.Test, s.EntryPoint, s.Metadata)
		}
	case assay.KindMCQ:
		if len(s.Choices) != 4 || !strings.Contains("ABCD", s.Reference) || s.Metadata["subject"] == nil {
			t.Errorf("mcq sample %d: choices %q, reference %q, metadata %v", i, s.Choices, s.Reference, s.Metadata)
		}
	case assay.KindMath:
		if _, ok := MathAnswer(s.Reference); !ok {
			t.Errorf("math sample %d: no final number in %q", i, s.Reference)
		}
	}
}

// toJSONArray rewrites a JSONL file as a pretty JSON array of the same objects.
func toJSONArray(t *testing.T, jsonl []byte) []byte {
	t.Helper()
	var objs []json.RawMessage
	for _, line := range bytes.Split(bytes.TrimSpace(jsonl), []byte("\n")) {
		objs = append(objs, json.RawMessage(line))
	}
	out, err := json.MarshalIndent(objs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// toCSV rewrites a JSONL file of string fields as CSV with the given header;
// a "choices" list becomes columns A to D.
func toCSV(t *testing.T, jsonl []byte, header ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	_ = w.Write(header)
	for _, line := range bytes.Split(bytes.TrimSpace(jsonl), []byte("\n")) {
		var obj map[string]any
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Fatal(err)
		}
		if choices, ok := obj["choices"].([]any); ok {
			for i, c := range choices {
				obj[string(rune('A'+i))] = c
			}
		}
		row := make([]string, len(header))
		for i, h := range header {
			row[i], _ = obj[h].(string)
		}
		_ = w.Write(row)
	}
	w.Flush()
	return buf.Bytes()
}

func TestParseVariantsGiveSameSamples(t *testing.T) {
	tests := []struct {
		file   string
		header []string // CSV columns; nil skips the CSV variant
	}{
		{"keval/simple.jsonl", []string{"question", "answer"}},
		{"keval/golden.jsonl", []string{"question", "answer"}},
		{"gsm8k.jsonl", []string{"question", "answer"}},
		{"mmlu.jsonl", []string{"question", "A", "B", "C", "D", "answer", "subject"}},
		{"humaneval.jsonl", []string{"task_id", "prompt", "canonical_solution", "test", "entry_point"}},
		{"shared:k-eval/fixture_simple_dataset.jsonl", []string{"question", "answer"}},
		{"shared:k-eval/golden_sample.jsonl", []string{"question", "answer"}},
		{"shared:gsm8k_sample.jsonl", []string{"question", "answer"}},
		{"shared:mmlu_sample.jsonl", []string{"question", "A", "B", "C", "D", "answer", "subject"}},
		{"shared:humaneval_sample.jsonl", []string{"task_id", "prompt", "canonical_solution", "test", "entry_point"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			jsonl := readDataset(t, tt.file)
			want := mustParse(t, jsonl, Options{Filename: "data.jsonl"})
			variants := map[string][]byte{
				"data.json":       toJSONArray(t, jsonl),
				"data.csv":        toCSV(t, jsonl, tt.header...),
				"bom-crlf.jsonl":  append([]byte("\ufeff"), bytes.ReplaceAll(jsonl, []byte("\n"), []byte("\r\n"))...),
				"no-extension":    toJSONArray(t, jsonl),
				"bom-crlf.json":   append([]byte("\ufeff"), bytes.ReplaceAll(toJSONArray(t, jsonl), []byte("\n"), []byte("\r\n"))...),
				"upload.json":     jsonl, // a .json file of one object per line still reads
				"bom.csv":         append([]byte("\ufeff"), toCSV(t, jsonl, tt.header...)...),
				"no-extension.tx": toCSV(t, jsonl, tt.header...),
			}
			for name, data := range variants {
				got := mustParse(t, data, Options{Filename: name})
				if got.Kind != want.Kind || got.QuestionKey != want.QuestionKey || got.AnswerKey != want.AnswerKey {
					t.Errorf("%s: kind %s keys %s/%s, want %s %s/%s", name, got.Kind, got.QuestionKey, got.AnswerKey,
						want.Kind, want.QuestionKey, want.AnswerKey)
				}
				if !reflect.DeepEqual(got.Samples, want.Samples) {
					t.Errorf("%s (%s): samples differ from the JSONL ones", name, got.Format)
				}
			}
		})
	}
}

func TestParseFormatsAndIDs(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		opts   Options
		format string
		kind   assay.Kind
		ids    []string
		refs   []string
	}{
		{"blank lines and no final newline", "\n{\"q\": \"a\", \"a\": \"1\"}\n\n  \n{\"q\": \"b\", \"a\": \"2\"}",
			Options{Filename: "x.jsonl", QuestionKey: "q", AnswerKey: "a"}, "jsonl", assay.KindQA,
			[]string{"2", "5"}, []string{"1", "2"}},
		{"numeric ids", `[{"id": 7, "question": "a", "answer": "x"}, {"id": "8", "question": "b", "answer": "y"}]`,
			Options{Filename: "x.json"}, "json", assay.KindQA, []string{"7", "8"}, []string{"x", "y"}},
		{"numeric answers in qa", `{"question": "2+2", "answer": 4}` + "\n" + `{"question": "1/2", "answer": 0.5}`,
			Options{Filename: "x.jsonl"}, "jsonl", assay.KindQA, []string{"1", "2"}, []string{"4", "0.5"}},
		{"mcq index answers", `{"question": "q", "choices": ["a","b","c","d"], "answer": 0}` + "\n" +
			`{"question": "r", "choices": ["a","b","c","d"], "answer": "3"}` + "\n" +
			`{"question": "s", "choices": ["a","b","c","d"], "answer": " c "}`,
			Options{Filename: "x.jsonl"}, "jsonl", assay.KindMCQ, []string{"1", "2", "3"}, []string{"A", "D", "C"}},
		{"mmlu csv", "question,A,B,C,D,answer\r\n\"What, is 2+2?\",3,4,5,6,B\r\nq2,x,y,z,w,2\r\n",
			Options{Filename: "mmlu.csv"}, "csv", assay.KindMCQ, []string{"1", "2"}, []string{"B", "C"}},
		{"math with commas and minus", `{"question": "a", "answer": "so\n#### 1,600"}` + "\n" + `{"question": "b", "answer": "#### -3.5\n"}`,
			Options{Filename: "x.jsonl"}, "jsonl", assay.KindMath, []string{"1", "2"}, []string{"so\n#### 1,600", "#### -3.5\n"}},
		{"math answers forced to qa", `{"question": "a", "answer": "#### 2"}`,
			Options{Filename: "x.jsonl", Kind: assay.KindQA}, "jsonl", assay.KindQA, []string{"1"}, []string{"#### 2"}},
		{"one math-looking answer among others is qa", `{"question": "a", "answer": "#### 2"}` + "\n" + `{"question": "b", "answer": "two"}`,
			Options{Filename: "x.jsonl"}, "jsonl", assay.KindQA, []string{"1", "2"}, []string{"#### 2", "two"}},
		{"unknown extension sniffs JSONL", `{"input": "a", "expected_output": "b"}`,
			Options{Filename: "upload"}, "jsonl", assay.KindQA, []string{"1"}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, []byte(tt.data), tt.opts)
			if p.Format != tt.format || p.Kind != tt.kind {
				t.Fatalf("format %s kind %s, want %s %s", p.Format, p.Kind, tt.format, tt.kind)
			}
			var ids, refs []string
			for _, s := range p.Samples {
				ids, refs = append(ids, s.SampleID), append(refs, s.Reference)
			}
			if !reflect.DeepEqual(ids, tt.ids) || !reflect.DeepEqual(refs, tt.refs) {
				t.Errorf("ids %q refs %q, want %q %q", ids, refs, tt.ids, tt.refs)
			}
		})
	}
}

func TestMathAnswer(t *testing.T) {
	tests := map[string]string{"#### 18": "18", "x\n#### 1,600\n": "1600", "####-3.25": "-3.25", "#### 18 eggs": "", "18": "", "": ""}
	for in, want := range tests {
		got, ok := MathAnswer(in)
		if got != want || ok != (want != "") {
			t.Errorf("MathAnswer(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
