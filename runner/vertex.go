package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/oauth2/google"

	"assay"
	"assay/config"
	"assay/runner/llm"
)

// cloudPlatform is the OAuth scope of Vertex AI's calls.
const cloudPlatform = "https://www.googleapis.com/auth/cloud-platform"

// vertexAccess is how this process reaches Vertex AI, read where LiteLLM
// reads it: Google's Application Default Credentials (the file
// GOOGLE_APPLICATION_CREDENTIALS names — a service account's or an
// authorized user's — else gcloud's, else the metadata server), the project
// from VERTEXAI_PROJECT or else the credentials, the location from
// VERTEXAI_LOCATION, else CLOUD_ML_REGION, else us-central1. field names
// the setting that asked, in errors.
func (m *Manager) vertexAccess(ctx context.Context, field string) (*llm.Vertex, error) {
	getenv := m.opts.Getenv
	var creds *google.Credentials
	if path := getenv("GOOGLE_APPLICATION_CREDENTIALS"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: Vertex AI's credentials: GOOGLE_APPLICATION_CREDENTIALS names %s: %w", field, path, err)
		}
		var kind struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(data, &kind)
		t := google.CredentialsType(kind.Type)
		if !slices.Contains([]google.CredentialsType{google.ServiceAccount, google.AuthorizedUser}, t) {
			return nil, fmt.Errorf("%s: Vertex AI's credentials: %s is not a service account's or an authorized user's credentials file (type %q)", field, path, kind.Type)
		}
		if creds, err = google.CredentialsFromJSONWithType(ctx, data, t, cloudPlatform); err != nil {
			return nil, fmt.Errorf("%s: Vertex AI's credentials in %s: %w", field, path, err)
		}
	} else {
		var err error
		if creds, err = google.FindDefaultCredentials(ctx, cloudPlatform); err != nil {
			return nil, fmt.Errorf("%s: no Google credentials for Vertex AI: set GOOGLE_APPLICATION_CREDENTIALS to a service account's key file, "+
				"or run gcloud auth application-default login (as LiteLLM, and k-eval's judge through it, read them)", field)
		}
	}
	v := &llm.Vertex{
		Project:  cmp.Or(getenv("VERTEXAI_PROJECT"), creds.ProjectID),
		Location: cmp.Or(getenv("VERTEXAI_LOCATION"), getenv("CLOUD_ML_REGION"), "us-central1"),
		Tokens:   creds.TokenSource,
	}
	if v.Project == "" {
		return nil, fmt.Errorf("%s: no Google Cloud project for Vertex AI: set VERTEXAI_PROJECT (LiteLLM's variable), or use credentials that name one", field)
	}
	return v, nil
}

// onVertex is the client configuration of a model on Vertex AI: Claude
// through Anthropic's Messages API there, any other (Gemini) through
// Vertex's OpenAI-compatible API, which names Google's models
// "google/gemini-…".
func onVertex(cfg llm.Config, model string, v *llm.Vertex) llm.Config {
	cfg.Vertex, cfg.Model = v, model
	if strings.HasPrefix(model, "claude") {
		cfg.Provider = llm.ProviderAnthropic
	} else {
		cfg.Provider = llm.ProviderOpenAI
		if !strings.Contains(model, "/") {
			cfg.Model = "google/" + model
		}
	}
	return cfg
}

// checkVertex refuses, before a run is stored, a run whose agent or judges
// are on Vertex AI where this process finds no credentials or project.
func (m *Manager) checkVertex(ctx context.Context, spec *config.Config, judged bool) error {
	var fields []string
	if spec.Agent.Type == config.AgentOpenAI || spec.Agent.Type == config.AgentAnthropic {
		models := spec.Agent.Models
		if len(models) == 0 {
			models = []config.AgentModel{{Model: spec.Agent.Model}}
		}
		for i, am := range models {
			if p, _, err := spec.Agent.WithModel(am).Resolve(); err == nil && p == config.ProviderVertex {
				field := "agent.model"
				if len(spec.Agent.Models) > 0 {
					field = fmt.Sprintf("agent.models[%d].model", i)
				}
				fields = append(fields, field)
			}
		}
	}
	if judged {
		for i, j := range spec.Panel() {
			if p, _, err := j.Resolve(); err == nil && p == config.ProviderVertex {
				fields = append(fields, strings.Replace(judgeKeyField(spec, i), "api_key_env", "model", 1))
			}
		}
	}
	for _, f := range fields {
		if _, err := m.vertexAccess(ctx, f); err != nil {
			return assay.Errorf(assay.EINVALID, "%s", err.Error())
		}
	}
	return nil
}
