package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay/internal/fixture"
	"assay/runner/llm/llmtest"
)

// assay run --json over MMLU-shaped files with report.slice_by: subject
// carries each subject's exact_match, which an agent that always answers B
// must score as the share of B among that subject's answers, read from the
// file itself. Over the project's fixture, and the public sample when
// ../shared is there.
func TestRunSlicesBySubject(t *testing.T) {
	for _, name := range []string{"testdata:mmlu.jsonl", "shared:mmlu_sample.jsonl"} {
		t.Run(name, func(t *testing.T) {
			var path string
			if shared, ok := strings.CutPrefix(name, "shared:"); ok {
				path = fixture.Shared(t, shared)
			} else {
				path = fixture.Path(strings.TrimPrefix(name, "testdata:"))
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			wantB, count := map[string]float64{}, map[string]float64{}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var row struct{ Subject, Answer string }
				if err := json.Unmarshal([]byte(line), &row); err != nil {
					t.Fatal(err)
				}
				count[row.Subject]++
				if row.Answer == "B" {
					wantB[row.Subject]++
				}
			}
			srv := llmtest.New(llmtest.Text("The answer is B."))
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			cfg := fmt.Sprintf(`name: sliced
dataset: {path: %q}
agent: {type: openai, model: agent-model, base_url: %q}
conditions: {baseline: {}}
execution: {num_repetitions: 1}
report: {slice_by: subject}
`, path, srv.URL)
			os.WriteFile(filepath.Join(dir, "run.yaml"), []byte(cfg), 0o644)
			var out, errOut bytes.Buffer
			if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", filepath.Join(dir, "assay.db"), "--quiet", "--json"}, &out, &errOut); err != nil {
				t.Fatalf("%v\n%s", err, errOut.String())
			}
			var sum struct {
				Slices []struct {
					Value      string
					Conditions []struct {
						Metrics []struct {
							Name string
							Mean float64
							N    int
						}
					}
				}
			}
			if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
				t.Fatal(err)
			}
			if len(sum.Slices) != len(count) {
				t.Fatalf("%d slices, the file has %d subjects", len(sum.Slices), len(count))
			}
			for _, s := range sum.Slices {
				m := s.Conditions[0].Metrics[0]
				if want := wantB[s.Value] / count[s.Value]; m.Name != "exact_match" || math.Abs(m.Mean-want) > 1e-9 || m.N != int(count[s.Value]) {
					t.Errorf("%s: %+v, want mean %.3f over %v", s.Value, m, want, count[s.Value])
				}
			}
		})
	}
}
