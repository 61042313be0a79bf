package scoring

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"assay/internal/fixture"
)

// humanEvalSample is one row of humaneval_sample.jsonl.
type humanEvalSample struct {
	TaskID            string `json:"task_id"`
	Prompt            string `json:"prompt"`
	CanonicalSolution string `json:"canonical_solution"`
	Test              string `json:"test"`
	EntryPoint        string `json:"entry_point"`
}

// gsm8kSample is one row of gsm8k_sample.jsonl.
type gsm8kSample struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// mmluSample is one row of mmlu_sample.jsonl.
type mmluSample struct {
	Subject  string   `json:"subject"`
	Question string   `json:"question"`
	Choices  []string `json:"choices"`
	Answer   string   `json:"answer"`
}

// eachDataset runs check over the rows of the project's fixture, then over
// those of the public sample in the conformance set (skipped, saying so,
// when ../shared is not beside the repository).
func eachDataset[T any](t *testing.T, fixtureName, sharedName string, check func(t *testing.T, rows []T)) {
	t.Run("fixture", func(t *testing.T) { check(t, readJSONL[T](t, fixture.Path(fixtureName))) })
	t.Run("conformance", func(t *testing.T) { check(t, readJSONL[T](t, fixture.Shared(t, sharedName))) })
}

// readJSONL decodes every line of a JSONL file.
func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open dataset: %v", err)
	}
	defer f.Close()
	var rows []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var row T
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("%s line %d: %v", name, len(rows)+1, err)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no rows", name)
	}
	return rows
}
