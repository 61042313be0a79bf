package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"assay"
	"assay/config"
	"assay/report"
	"assay/route"
	"assay/runner"
	"assay/tally"
)

// cmdRoute replays the routing algorithms over a finished run's answers
// from every model.
func cmdRoute(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a, err := parseRouteArgs(args, stderr)
	if err != nil {
		return err
	}
	db, err := tally.Open(ctx, a.dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	r, err := report.Load(ctx, db, a.runID)
	if err != nil {
		return fmt.Errorf("route: %w", err)
	}
	var vectors map[int64][]float32
	if a.embedding.Model != "" {
		samples, err := db.Samples(ctx, r.Dataset.ID, 0, 0)
		if err != nil {
			return err
		}
		if vectors, err = runner.Embed(ctx, db, nil, nil, r.Dataset.ID, a.embedding, samples); err != nil {
			return routeError(err)
		}
	}
	res, err := r.Route(ctx, db, a.condition, a.opt, vectors)
	if err != nil {
		return routeError(err)
	}
	if a.asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	printRouting(stdout, res)
	return nil
}

// routeArgs is what assay route was asked.
type routeArgs struct {
	runID     int64
	dbPath    string
	condition string
	asJSON    bool
	opt       route.Options
	embedding runner.Embedding // its Model "" for local features
}

// parseRouteArgs reads assay route's flags and checks them.
func parseRouteArgs(args []string, stderr io.Writer) (*routeArgs, error) {
	fs := newFlags("route", stderr)
	runID := fs.Int64("run", 0, "the run over several models to replay (required)")
	dbPath := dbFlag(fs)
	orders := fs.Int("orders", route.DefaultOrders, "random orders of the samples each algorithm is replayed over")
	seed := fs.Uint64("seed", 1, "the seed of the orders and the algorithms' draws: the same seed gives the same figures")
	weights := fs.String("weights", "0.7,0.2,0.1", "the reward's weights of quality, cost and latency")
	reward := fs.String("reward", route.RewardDocs, "docs: quality − cost − latency, these min–max scaled over the models (conduit-benchmark's documentation); conduit: quality + 1/(1 + cost $) + 1/(1 + latency s), weighted (its library's code)")
	condition := fs.String("condition", "", "the run file's condition the models answered under (default: the first)")
	switchAfter := fs.Int("switch-after", 0, "queries the hybrids learn without context before LinUCB takes over (default: a quarter of the samples, at least 20)")
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	embModel := fs.String("embeddings-model", "", "context features from this embedding model (an OpenAI-compatible /v1/embeddings); default: cheap local features")
	embURL := fs.String("embeddings-url", "", "the embeddings endpoint's base URL (default: OpenAI's API)")
	embKey := fs.String("embeddings-key-env", "", "the variable holding its key (default: OPENAI_API_KEY for OpenAI's API, none for another URL)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return &exitError{code: 2, err: fmt.Errorf("route: "+format, args...)}
	}
	w, err := route.ParseWeights(*weights)
	switch {
	case *runID <= 0:
		return nil, bad("--run is required")
	case *orders <= 0:
		return nil, bad("--orders must be at least 1, got %d", *orders)
	case err != nil:
		return nil, bad("%w", err)
	case !slices.Contains(route.Rewards, *reward):
		return nil, bad("--reward must be docs or conduit, not %q", *reward)
	case *switchAfter < 0:
		return nil, bad("--switch-after must be at least 0, got %d", *switchAfter)
	}
	a := &routeArgs{runID: *runID, dbPath: *dbPath, condition: *condition, asJSON: *asJSON,
		opt: route.Options{Orders: *orders, Seed: *seed, Weights: w, Reward: *reward}}
	if *switchAfter > 0 {
		s := route.DefaultSettings(0)
		s.SwitchAfter = *switchAfter
		a.opt.Settings = &s
	}
	if *embModel != "" {
		key := *embKey
		if key == "" && *embURL == "" {
			key = config.DefaultKeyEnv
		}
		a.embedding = runner.Embedding{Model: *embModel, BaseURL: *embURL, APIKeyEnv: key}
	}
	return a, nil
}

// routeError is a replay's error: a bad request's exits 2.
func routeError(err error) error {
	if assay.ErrorCode(err) == assay.EINVALID {
		return &exitError{code: 2, err: fmt.Errorf("route: %s", assay.ErrorMessage(err))}
	}
	return fmt.Errorf("route: %w", err)
}

func printRouting(w io.Writer, r *report.Routing) {
	fmt.Fprintf(w, "run %d, condition %s: %d samples answered by every model (%d left out), %d orders, seed %d, weights %v, reward %s\n\n",
		r.RunID, r.Condition, r.Samples, r.LeftOut, r.Orders, r.Seed, r.Weights, r.Reward)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "algorithm\tquality\t95% CI\tcost/query $\tlatency ms\treward\tregret\tcost saved\tshares\t")
	for _, a := range r.Algorithms {
		saved := "—"
		if a.CostSaved != nil {
			saved = fmt.Sprintf("%.0f%%", 100**a.CostSaved)
		}
		fmt.Fprintf(tw, "%s\t%.3f\t[%.3f, %.3f]\t%.6f\t%.0f\t%.3f\t%.3f\t%s\t%s\t\n", a.Name, a.Quality, a.QualityCI95[0], a.QualityCI95[1],
			a.CostUSD, a.LatencyMS, a.Reward, a.Regret, saved, strings.Join(a.Shares(), " "))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nEach model alone:")
	for _, m := range r.Models {
		fmt.Fprintf(w, "  %s: quality %.3f, $%.6f and %.0f ms per query, reward %.3f\n", m.Name, m.Quality, m.CostUSD, m.LatencyMS, m.Reward)
	}
}
