package runner

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"assay"
	"assay/config"
	"assay/store"
)

// Embedding names an OpenAI-compatible embeddings endpoint: the routing
// replay's optional context features.
type Embedding struct {
	Model     string
	BaseURL   string // empty: OpenAI's API
	APIKeyEnv string // the variable holding the key; empty for a server that needs none
}

// embedBatch is how many questions one embeddings request carries.
const embedBatch = 64

// Embed returns an embedding of each sample's question, asking the endpoint
// only for those the database does not keep yet and keeping what it
// answers. getenv nil means os.Getenv.
func Embed(ctx context.Context, db *store.DB, hc *http.Client, getenv func(string) string, datasetID int64, e Embedding, samples []store.Sample) (map[int64][]float32, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if e.Model == "" {
		return nil, assay.Errorf(assay.EINVALID, "embeddings: name the embedding model")
	}
	have, err := db.Embeddings(ctx, datasetID, e.Model)
	if err != nil {
		return nil, err
	}
	var missing []store.Sample
	for _, s := range samples {
		if _, ok := have[s.ID]; !ok {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return have, nil
	}
	client, err := embeddingsClient(e, hc, getenv)
	if err != nil {
		return nil, err
	}
	for start := 0; start < len(missing); start += embedBatch {
		got, err := embedSome(ctx, client, e, missing[start:min(start+embedBatch, len(missing))])
		if err != nil {
			return nil, err
		}
		if err := db.SaveEmbeddings(ctx, e.Model, got); err != nil {
			return nil, err
		}
		for id, v := range got {
			have[id] = v
		}
	}
	return have, nil
}

// embeddingsClient is the client of the embeddings endpoint, with its key.
func embeddingsClient(e Embedding, hc *http.Client, getenv func(string) string) (*openai.Client, error) {
	key := ""
	if e.APIKeyEnv != "" {
		if !config.IsEnvName(e.APIKeyEnv) {
			return nil, assay.Errorf(assay.EINVALID, "embeddings: the key variable %q is not a variable's name", e.APIKeyEnv)
		}
		if key = getenv(e.APIKeyEnv); key == "" {
			return nil, assay.Errorf(assay.EINVALID, "embeddings: %s is not set", e.APIKeyEnv)
		}
	}
	cfg := openai.DefaultConfig(key)
	if e.BaseURL != "" {
		cfg.BaseURL = strings.TrimRight(e.BaseURL, "/")
	}
	if hc != nil {
		cfg.HTTPClient = hc
	}
	return openai.NewClientWithConfig(cfg), nil
}

// embedSome asks for the embeddings of one batch of questions, by sample row.
func embedSome(ctx context.Context, client *openai.Client, e Embedding, batch []store.Sample) (map[int64][]float32, error) {
	input := make([]string, len(batch))
	for i, s := range batch {
		input[i] = strings.ReplaceAll(s.Input, "\n", " ")
	}
	resp, err := client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: input, Model: openai.EmbeddingModel(e.Model)})
	if err != nil {
		return nil, fmt.Errorf("embeddings from %s: %w", orDefault(e.BaseURL, "OpenAI's API"), err)
	}
	if len(resp.Data) != len(batch) {
		return nil, fmt.Errorf("embeddings: asked for %d, got %d", len(batch), len(resp.Data))
	}
	got := map[int64][]float32{}
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(batch) || len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings: an answer with index %d of %d and %d numbers", d.Index, len(batch), len(d.Embedding))
		}
		got[batch[d.Index].ID] = d.Embedding
	}
	return got, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
