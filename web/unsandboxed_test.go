package web_test

import (
	"strconv"
	"strings"
	"testing"

	"assay/internal/fixture"
	"assay/store"
)

func TestUnsandboxedCodeRunIsFlagged(t *testing.T) {
	data := fixture.Read(t, "humaneval.jsonl")
	f := newRunServer(t, rubricAgent("```python\ndef f():\n    pass\n```"))
	ds := f.dataset("humaneval.jsonl", string(data))
	conds := f.conditions("baseline")
	for _, opt := range []bool{false, true} {
		form := f.runForm(ds, conds)
		form.Set("evaluator", "code_execution")
		form.Set("repetitions", "1")
		if opt {
			form.Set("unsandboxed", "1")
		}
		id := f.launch(form)
		f.waitFor(id, store.RunCompleted, store.RunFailed)
		_, doc := f.get("/runs/" + strconv.FormatInt(id, 10))
		warning := text(doc, "#unsandboxed-warning")
		if opt != strings.Contains(warning, "without the sandbox") {
			t.Errorf("unsandboxed=%v: warning %q", opt, warning)
		}
	}
}
