package config

import (
	"cmp"
	"time"
)

// Batch sends a run's judge calls through their providers' batch APIs, at
// about half the price of live calls and hours instead of seconds: the
// answers are judged as the batches come back.
type Batch struct {
	// Judge sends judge calls in batches.
	Judge bool `yaml:"judge" json:"judge"`
	// Agent sends the agent's calls in batches under the conditions
	// without MCP servers, where an answer is one call; under the others
	// they go live.
	Agent bool `yaml:"agent" json:"agent,omitempty"`
	// MaxWait is how long a batch may take before it is cancelled and its
	// unanswered lines are called live ("" is 24h, the providers' window).
	MaxWait string `yaml:"max_wait" json:"max_wait,omitempty"`
	// Size is the most lines a batch holds ("" is 1,000).
	Size int `yaml:"size" json:"size,omitempty"`
	// Gather is how long calls are gathered into a batch before it is sent,
	// unless it fills first ("" is 10s).
	Gather string `yaml:"gather" json:"gather,omitempty"`
	// Poll is the longest wait between two looks at how a batch stands
	// ("" is 30s): a batch is first looked at a second after it is sent,
	// then twice as long each time up to Poll.
	Poll string `yaml:"poll" json:"poll,omitempty"`
}

// The batch settings' defaults and bounds: OpenAI takes up to 50,000 lines
// in a batch, and both OpenAI and Anthropic end a batch within a day.
const (
	DefaultBatchSize = 1000
	MaxBatchSize     = 50_000
	MaxBatchWait     = 24 * time.Hour
)

// DefaultBatchDiscount is the share of the price a call sent in a batch
// saves, for a model whose price does not say: OpenAI and Anthropic both
// take half off.
const DefaultBatchDiscount = 0.5

// Waits are a batch's durations, defaults filled in. The config was
// checked: each parses.
func (b *Batch) Waits() (maxWait, gather, poll time.Duration) {
	d := func(s string, def time.Duration) time.Duration {
		v, err := time.ParseDuration(s)
		if s == "" || err != nil {
			return def
		}
		return v
	}
	return d(b.MaxWait, MaxBatchWait), d(b.Gather, 10*time.Second), d(b.Poll, 30*time.Second)
}

// Lines is the most lines a batch holds.
func (b *Batch) Lines() int { return cmp.Or(b.Size, DefaultBatchSize) }

// Discount is the share of a model's price a call in a batch saves.
func (p Price) Discount() float64 {
	if p.BatchDiscount == nil {
		return DefaultBatchDiscount
	}
	return *p.BatchDiscount
}

func (k *checker) batch(c *Config) {
	b := c.Batch
	if b == nil {
		return
	}
	if b.Agent {
		k.batchAgent(c.Agent)
	}
	if b.Size != 0 {
		k.within("batch.size", b.Size, 1, MaxBatchSize)
	}
	k.batchDurations(b)
	if b.Judge {
		k.batchJudges(c)
	}
}

// batchAgent refuses to batch an agent whose calls a batch cannot hold.
func (k *checker) batchAgent(a Agent) {
	if a.Type != AgentOpenAI && a.Type != AgentAnthropic {
		k.fail("batch.agent", "only an agent of type openai or anthropic makes calls a batch can hold; a %s agent's are its own", a.Type)
	} else if p, _, err := a.Resolve(); err == nil && p == ProviderVertex {
		k.fail("batch.agent", "the agent is reached through Vertex AI, whose batch prediction assay does not use")
	}
}

// batchDurations checks the batch's waits: durations, each within its
// bound.
func (k *checker) batchDurations(b *Batch) {
	for _, d := range []struct {
		key, v string
		max    time.Duration
	}{{"batch.max_wait", b.MaxWait, MaxBatchWait}, {"batch.gather", b.Gather, time.Hour}, {"batch.poll", b.Poll, time.Hour}} {
		if d.v == "" {
			continue
		}
		v, err := time.ParseDuration(d.v)
		switch {
		case err != nil:
			k.fail(d.key, "%q is not a duration such as 24h, 90m or 30s", d.v)
		case v <= 0 || v > d.max:
			k.fail(d.key, "must be more than 0 and at most %s, got %s", d.max, d.v)
		}
	}
}

// batchJudges refuses to batch a judge reached through Vertex AI.
func (k *checker) batchJudges(c *Config) {
	judges := c.Judges
	if len(judges) == 0 {
		judges = []Judge{c.Judge}
	}
	for _, j := range judges {
		if p, _, err := j.Resolve(); err == nil && p == ProviderVertex {
			k.fail("batch.judge", "the judge %s is reached through Vertex AI, whose batch prediction assay does not use: only OpenAI-compatible and Anthropic judges' calls go in batches",
				cmp.Or(j.Name, j.Model))
		}
	}
}
