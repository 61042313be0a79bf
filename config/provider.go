package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Provider is the API a model is reached through.
type Provider string

// The providers assay speaks natively.
const (
	ProviderOpenAI    Provider = "openai"    // any OpenAI-compatible chat completions API
	ProviderAnthropic Provider = "anthropic" // the Anthropic Messages API
	// ProviderVertex is Google's Vertex AI, as LiteLLM's "vertex_ai/…"
	// models reach it: Claude through Anthropic's endpoint there, other
	// models (Gemini) through Vertex's OpenAI-compatible one, with Google's
	// Application Default Credentials.
	ProviderVertex Provider = "vertex_ai"
)

// AnthropicKeyEnv names the variable of Anthropic's key, assumed for an
// Anthropic agent or judge without a base URL or api_key_env.
const AnthropicKeyEnv = "ANTHROPIC_API_KEY"

// otherProviders are LiteLLM prefixes of providers assay reaches only
// through an OpenAI-compatible proxy.
var otherProviders = []string{"bedrock", "bedrock_converse", "azure", "azure_ai",
	"gemini", "sagemaker", "watsonx", "cohere", "mistral", "groq", "together_ai", "fireworks_ai", "deepseek"}

// Resolve is the judge's provider and the model name to send. A judge with
// a type uses it; one whose model has a LiteLLM-style prefix (k-eval's
// "vertex_ai/claude-…", "anthropic/claude-…", "openai/gpt-…") takes the
// provider from the prefix and sends the model without it, a base URL then
// only replacing the provider's address (a proxy that speaks its API); a
// prefix of a provider assay does not speak is an error that says how to
// reach it through a proxy. With a base URL an "openai/" name, or any
// name under type openai, goes to the server as written: a LiteLLM proxy
// knows "vertex_ai/claude-opus-4-5".
func (j Judge) Resolve() (Provider, string, error) {
	return resolve("judge", j.Type, j.Model, j.BaseURL)
}

// Provider is the API an agent of type openai or anthropic speaks, and the
// model to send, as Judge.Resolve decides for a judge.
func (a Agent) Resolve() (Provider, string, error) {
	t := Provider("")
	if a.Type == AgentAnthropic {
		t = ProviderAnthropic
	}
	return resolve("agent", t, a.Model, a.BaseURL)
}

func resolve(what string, t Provider, model, baseURL string) (Provider, string, error) {
	prefix, name, ok := strings.Cut(model, "/")
	switch t {
	case ProviderOpenAI:
		return t, model, nil
	case ProviderAnthropic, ProviderVertex:
		if ok && (prefix == string(t) || t == ProviderVertex && prefix == "vertex_ai_beta") {
			return t, name, nil
		}
		return t, model, nil
	case "":
	default:
		return "", "", fmt.Errorf("%s.type: unknown provider %q (want openai, anthropic or vertex_ai)", what, t)
	}
	if !ok {
		return ProviderOpenAI, model, nil
	}
	switch prefix {
	case "openai":
		if baseURL != "" {
			return ProviderOpenAI, model, nil
		}
		return ProviderOpenAI, name, nil
	case "anthropic":
		return ProviderAnthropic, name, nil
	case "vertex_ai", "vertex_ai_beta":
		return ProviderVertex, name, nil
	}
	if baseURL != "" {
		return ProviderOpenAI, model, nil
	}
	for _, p := range otherProviders {
		if prefix == p {
			return "", "", fmt.Errorf("%s.model %q: assay does not reach %s directly. Point %s.base_url at an OpenAI-compatible proxy that does "+
				"(e.g. LiteLLM: litellm --model %s, then %s.base_url: http://localhost:4000/v1 and %s.api_key_env naming the proxy's key), "+
				"or, for a Claude model, use %s.type: anthropic with model %q and ANTHROPIC_API_KEY",
				what, model, prefix, what, model, what, what, what, name)
		}
	}
	return ProviderOpenAI, model, nil
}

// KeyOptional reports whether a run may reach baseURL without a key when
// env is unset: a model server on this machine (Ollama, vLLM, llama.cpp)
// usually needs none, and env is the provider's default variable
// (OPENAI_API_KEY, ANTHROPIC_API_KEY), which the run form and a run file
// without api_key_env name. A variable named on purpose is needed.
func KeyOptional(env, baseURL string) bool {
	return (env == DefaultKeyEnv || env == AnthropicKeyEnv) && LocalEndpoint(baseURL)
}

// LocalEndpoint reports whether baseURL is a server on this machine
// (localhost, 127.0.0.0/8, ::1).
func LocalEndpoint(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// keyEnvOf is the variable a provider's key is read from unless the file
// names one: OPENAI_API_KEY, ANTHROPIC_API_KEY, or none for Vertex AI,
// which is reached with Google's credentials.
func keyEnvOf(p Provider) string {
	switch p {
	case ProviderAnthropic:
		return AnthropicKeyEnv
	case ProviderVertex:
		return ""
	}
	return DefaultKeyEnv
}

// Warnings are what a run file may say but should know it says: a judge's
// temperature above 0 makes its scores vary from call to call (k-eval
// warns of it too).
func (c *Config) Warnings() []string {
	var out []string
	for i, j := range c.Panel() {
		if j.Temperature > 0 {
			field := "judge.temperature"
			if len(c.Judges) > 0 {
				field = fmt.Sprintf("judges[%d].temperature", i)
			}
			out = append(out, fmt.Sprintf("%s is %g: above 0 the judge scores the same answer differently from call to call; 0 keeps its scores for the agent's differences", field, j.Temperature))
		}
	}
	return out
}
