package readmodel

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"assay"
	"assay/config"
	"assay/report"
	"assay/store"
)

// ExportFormats are the formats Export writes.
func ExportFormats() []string { return []string{"json", "csv", "html"} }

// Export writes a run as JSON (the run, its config snapshot and every result
// with its scores), CSV (one row per result and metric) or a self-contained
// HTML report. JSON and CSV are streamed a few hundred samples at a time.
// None of them holds a secret: the config snapshot names key variables,
// never keys, and URLs lose their credentials.
func Export(ctx context.Context, db *store.DB, runID int64, format string, w io.Writer) error {
	sc, err := OwnerScope(ctx, db, runID)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		return ExportJSON(ctx, db, sc, nil, w)
	case "csv":
		return ExportCSV(ctx, db, sc, nil, w)
	case "html":
		return exportHTML(ctx, db, sc, nil, Query{}, w)
	}
	return assay.Errorf(assay.EINVALID, "unknown export format %q: use json, csv or html", format)
}

// exportRunHead is the "run" object of the JSON export.
type exportRunHead struct {
	ID            int64             `json:"id"`
	Name          string            `json:"name"`
	Status        store.RunStatus   `json:"status"`
	Error         string            `json:"error,omitempty"`
	DatasetSHA256 string            `json:"dataset_sha256"`
	Dataset       string            `json:"dataset"`
	Kind          assay.Kind        `json:"kind"`
	Repetitions   int               `json:"repetitions"`
	Conditions    []exportCondition `json:"conditions"`
	Config        json.RawMessage   `json:"config"`
	CreatedAt     time.Time         `json:"created_at"`
	StartedAt     *time.Time        `json:"started_at"`
	FinishedAt    *time.Time        `json:"finished_at"`
	Summary       *report.Summary   `json:"summary"`
	// ImportExtra: what the files an imported run came from hold that the
	// import did not read, as given.
	ImportExtra json.RawMessage `json:"import_extra,omitempty"`
	// Audit is the run's latest judge audit (assay audit), as it printed it.
	Audit json.RawMessage `json:"audit,omitempty"`
}

// exportCondition is a condition's snapshot without the env and headers of
// its MCP servers, where secrets live.
type exportCondition struct {
	Name                  string         `json:"name"`
	SystemPrompt          string         `json:"system_prompt"`
	MCPServers            []exportServer `json:"mcp_servers"`
	RequireMCPToolUse     bool           `json:"require_mcp_tool_use"`
	RequireMCPToolSuccess bool           `json:"require_mcp_tool_success"`
}

type exportServer struct {
	Name      string          `json:"name"`
	Transport assay.Transport `json:"transport"`
	Command   string          `json:"command,omitempty"`
	Args      []string        `json:"args,omitempty"`
	URL       string          `json:"url,omitempty"`
}

func runHead(sc *Scope, sum *report.Summary) exportRunHead {
	run := sc.Run
	h := exportRunHead{
		ID:            run.ID,
		Name:          run.Name,
		Status:        run.Status,
		Error:         run.Message,
		DatasetSHA256: sc.Dataset.SHA256,
		Dataset:       sc.Dataset.Name,
		Kind:          sc.Dataset.Kind,
		Repetitions:   run.Repetitions,
		Config:        redactConfig(run.Config),
		CreatedAt:     run.CreatedAt,
		StartedAt:     run.StartedAt,
		FinishedAt:    run.FinishedAt,
		Summary:       sum,
		Conditions:    []exportCondition{},
	}
	for _, c := range run.Conditions {
		ec := exportCondition{
			Name:                  c.Name,
			SystemPrompt:          c.SystemPrompt,
			MCPServers:            []exportServer{},
			RequireMCPToolUse:     c.RequireMCPToolUse,
			RequireMCPToolSuccess: c.RequireMCPToolSuccess,
		}
		for _, srv := range c.MCPServers {
			ec.MCPServers = append(ec.MCPServers, exportServer{
				Name:      srv.Name,
				Transport: srv.Transport,
				Command:   srv.Command,
				Args:      srv.Args,
				URL:       WithoutCredentials(srv.URL),
			})
		}
		h.Conditions = append(h.Conditions, ec)
	}
	return h
}

// redactConfig returns the config snapshot with the credentials of every URL
// in it removed. The snapshot already names key variables rather than keys.
func redactConfig(cfg *config.Config) json.RawMessage {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return json.RawMessage("null")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return json.RawMessage("null")
	}
	out, _ := json.Marshal(redactURLs(v))
	return out
}

func redactURLs(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = redactURLs(x)
		}
	case []any:
		for i, x := range t {
			t[i] = redactURLs(x)
		}
	case string:
		return WithoutCredentials(t)
	}
	return v
}
