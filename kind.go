// Package assay holds the words the record, the run configs and the pages
// share: a dataset's kind, a condition and its MCP servers, a model's price,
// and the errors whose message a user may read. It imports nothing of
// assay's own; every other package may import it.
package assay

// Kind is the shape of a dataset's samples, which decides its prompt and default evaluators.
type Kind string

// The kinds of dataset assay knows.
const (
	KindQA   Kind = "qa"
	KindMCQ  Kind = "mcq"
	KindMath Kind = "math"
	KindCode Kind = "code"
)

// Kinds lists every kind, in the order pages offer them.
var Kinds = []Kind{KindQA, KindMCQ, KindMath, KindCode}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}
