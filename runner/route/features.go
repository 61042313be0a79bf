package route

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"
)

// FeatureDim is the length of the context features Features computes.
const FeatureDim = 16

// The layout of the features: a constant, the question's length, a hashed
// bag of its words, then hashed metadata values.
const (
	wordBuckets = 11
	metaBuckets = FeatureDim - 2 - wordBuckets
)

// Features are a sample's context for the contextual algorithms, computed
// locally and cheaply: 1 (the intercept), the log of the question's length
// in words, its words hashed into 11 buckets (L2-normalised counts), and
// each metadata field's value (MMLU's subject) hashed into 3 buckets.
func Features(question string, metadata map[string]any) []float64 {
	x := make([]float64, FeatureDim)
	x[0] = 1
	words := strings.FieldsFunc(strings.ToLower(question), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	x[1] = math.Log1p(float64(len(words))) / 5
	var norm float64
	for _, w := range words {
		x[2+bucket(w, wordBuckets)]++
	}
	for _, v := range x[2 : 2+wordBuckets] {
		norm += v * v
	}
	if norm > 0 {
		norm = math.Sqrt(norm)
		for i := 2; i < 2+wordBuckets; i++ {
			x[i] /= norm
		}
	}
	keys := make([]string, 0, len(metadata))
	for k := range metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch v := metadata[k].(type) {
		case string, float64, int, int64, bool:
			x[2+wordBuckets+bucket(fmt.Sprintf("%s=%v", k, v), metaBuckets)] = 1
		}
	}
	return x
}

func bucket(s string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() % uint32(n))
}
