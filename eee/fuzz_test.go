package eee

import (
	"os"
	"testing"

	"assay/store"
)

// FuzzRead feeds any pair of files to the EEE reader. It must not panic;
// what it accepts holds samples and a result for each of their runs.
func FuzzRead(f *testing.F) {
	agg, _ := os.ReadFile("../testdata/eee/ask-sre_20251123_3f1c2a9e.json")
	inst, _ := os.ReadFile("../testdata/eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl")
	f.Add(agg, inst)
	f.Add(agg, inst[:len(inst)/2])
	f.Add([]byte(`{"schema_version": "0.2.1", "evaluation_results": [{"evaluation_name": "a/b", "source_data": {"dataset_sha256": "`+
		"0000000000000000000000000000000000000000000000000000000000000000"+`"}}]}`),
		[]byte(`{"schema_version": "instance_level_eval_0.2.1", "evaluation_name": "a/b", "sample_idx": 0, "input": {"raw": "q"}, "run_details": [{"repetition_index": 0, "x": 1}]}`))
	f.Fuzz(func(t *testing.T, agg, inst []byte) {
		imp, err := Read(Files{ResultsName: "a.json", InstancesName: "i.jsonl", Results: agg, Instances: Bytes(inst)})
		if err != nil {
			return
		}
		ordinals := map[int]bool{}
		for _, s := range imp.Samples {
			ordinals[s.Ordinal] = true
		}
		n := 0
		err = imp.EachResult(func(_ *store.Result, o int) error {
			n++
			if !ordinals[o] {
				t.Fatalf("a result of sample ordinal %d, which the samples lack", o)
			}
			return nil
		})
		if err != nil || len(imp.Samples) == 0 || n == 0 || n != imp.Results {
			t.Fatalf("accepted %d samples, %d results of %d counted: %v", len(imp.Samples), n, imp.Results, err)
		}
	})
}
