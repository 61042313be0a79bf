package route

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
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

// EmbeddingFeatures are a sample's context from an embedding of its
// question: 1, the log of its length in words, and the embedding projected
// onto FeatureDim − 2 fixed random directions (a seeded Gaussian projection,
// which keeps distances roughly), scaled to unit length. The contextual
// algorithms stay fast whatever the embedding's size.
func EmbeddingFeatures(question string, vec []float32) []float64 {
	x := make([]float64, FeatureDim)
	x[0] = 1
	x[1] = math.Log1p(float64(len(strings.Fields(question)))) / 5
	dirs := projection(len(vec))
	var norm float64
	for k := range FeatureDim - 2 {
		s := 0.0
		for i, v := range vec {
			s += float64(v) * dirs[k][i]
		}
		x[2+k] = s
		norm += s * s
	}
	if norm > 0 {
		norm = math.Sqrt(norm)
		for k := 2; k < FeatureDim; k++ {
			x[k] /= norm
		}
	}
	return x
}

var (
	projMu    sync.Mutex
	projCache = map[int][][]float64{}
)

// projection is the fixed random directions for embeddings of size n.
func projection(n int) [][]float64 {
	projMu.Lock()
	defer projMu.Unlock()
	if p, ok := projCache[n]; ok {
		return p
	}
	rng := rand.New(rand.NewPCG(0x0a55a7, uint64(n)))
	p := make([][]float64, FeatureDim-2)
	for k := range p {
		p[k] = make([]float64, n)
		for i := range p[k] {
			p[k][i] = rng.NormFloat64()
		}
	}
	projCache[n] = p
	return p
}
