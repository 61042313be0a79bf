package ingest

import (
	"bytes"
	"testing"
)

// FuzzParse feeds any bytes to the dataset decoder under each format's
// name. It must not panic; what it accepts must be whole and consistent —
// numbered samples with unique ids — and the same every time.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"id": "q1", "question": "What is 2+2?", "answer": "4"}`+"\n"), "a.jsonl")
	f.Add([]byte(`[{"question": "Capital of Italy?", "answer": "Rome"}]`), "a.json")
	f.Add([]byte("question,answer\n\"2+2, really?\",4\n"), "a.csv")
	f.Add([]byte(`{"task_id": "HumanEval/0", "prompt": "def f():\n", "canonical_solution": "  return 1\n", "test": "def check(c): assert c() == 1\n", "entry_point": "f"}`), "h.jsonl")
	f.Add([]byte(`{"question": "Q", "choices": ["a", "b", "c", "d"], "answer": 2}`), "m.jsonl")
	f.Add([]byte("\xef\xbb\xbf{\"question\": \"Q\", \"answer\": 1e400}\n"), "x")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		p, err := Parse(data, Options{Filename: name, MaxBytes: 1 << 20})
		if err != nil {
			if p != nil {
				t.Fatalf("an error with samples: %v", err)
			}
			return
		}
		if len(p.Samples) == 0 {
			t.Fatal("accepted with no samples")
		}
		seen := map[string]bool{}
		for i, s := range p.Samples {
			if s.Ordinal != i+1 || s.SampleID == "" || seen[s.SampleID] {
				t.Fatalf("sample %d: ordinal %d, id %q (seen %v)", i, s.Ordinal, s.SampleID, seen[s.SampleID])
			}
			seen[s.SampleID] = true
		}
		again, err := Parse(bytes.Clone(data), Options{Filename: name, MaxBytes: 1 << 20})
		if err != nil || len(again.Samples) != len(p.Samples) || again.SHA256 != p.SHA256 || again.Kind != p.Kind {
			t.Fatalf("a second parse differs: %v", err)
		}
	})
}
