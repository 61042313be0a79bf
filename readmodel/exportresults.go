package readmodel

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"assay/report"
	"assay/store"
)

// exportResult is one result in the JSON export.
type exportResult struct {
	SampleID         string            `json:"sample_id"`     // the dataset's own id
	SampleRowID      int64             `json:"sample_row_id"` // as in /runs/:id/samples/:sample
	Condition        string            `json:"condition"`
	Repetition       int               `json:"repetition"`
	Response         string            `json:"response"`
	Error            string            `json:"error"`
	ErrorKind        store.ErrorKind   `json:"error_kind"`
	Model            string            `json:"model"` // the model that answered, when known
	TokensIn         int               `json:"tokens_in"`
	TokensOut        int               `json:"tokens_out"`
	CacheReadTokens  int               `json:"cache_read_tokens"`  // of tokens_in
	CacheWriteTokens int               `json:"cache_write_tokens"` // of tokens_in
	CostUSD          float64           `json:"cost_usd"`
	CostSource       store.CostSource  `json:"cost_source"` // prices, agent, or "" when unpriced
	LatencyMS        int64             `json:"latency_ms"`
	Attempts         int               `json:"attempts"`        // model calls or command starts, every turn and retry
	Turns            int               `json:"turns,omitempty"` // the agent's own count (Claude Code's num_turns)
	Retries          []string          `json:"retries"`         // the calls repeated after a failure, and why
	ToolCalls        []store.ToolCall  `json:"tool_calls"`
	UnverifiedClaims []string          `json:"unverified_claims"`
	Scores           []exportScore     `json:"scores"`
	Judgements       []exportJudgement `json:"judgements"`
}

type exportScore struct {
	ID              int64          `json:"id"` // what verdicts and the review API name
	Evaluator       string         `json:"evaluator"`
	Metric          string         `json:"metric"`
	Value           float64        `json:"value"`
	Reasoning       string         `json:"reasoning"`
	JudgeRepetition int            `json:"judge_repetition"`
	Judge           string         `json:"judge,omitempty"` // the panel judge that gave it
	Reviews         []exportReview `json:"reviews"`
}

// exportReview is one reviewer's verdict on a score.
type exportReview struct {
	Reviewer string    `json:"reviewer"`
	Verdict  string    `json:"verdict"` // agree or override
	Value    float64   `json:"value"`   // the reviewer's: the judge's when they agree
	Note     string    `json:"note"`
	At       time.Time `json:"at"`
}

// exportJudgement is one evaluator's judgement: its cost, its error, its raw output.
type exportJudgement struct {
	Evaluator        string          `json:"evaluator"`
	JudgeRepetition  int             `json:"judge_repetition"`
	Judge            string          `json:"judge,omitempty"` // the panel judge; absent for a run's one judge
	Seed             *int            `json:"seed,omitempty"`  // the judge's, for this call
	Error            string          `json:"error"`
	ErrorKind        store.ErrorKind `json:"error_kind"`
	Attempts         int             `json:"attempts"`
	Detail           string          `json:"detail"`
	Raw              string          `json:"raw"`
	UnverifiedClaims []string        `json:"unverified_claims"`
	TokensIn         int             `json:"tokens_in"`
	TokensOut        int             `json:"tokens_out"`
	CacheReadTokens  int             `json:"cache_read_tokens"`  // of tokens_in: the judge's instructions read from the prompt cache
	CacheWriteTokens int             `json:"cache_write_tokens"` // of tokens_in
	CostUSD          float64         `json:"cost_usd"`
	LatencyMS        int64           `json:"latency_ms"`
}

func toExport(r *store.Result, name string, reviews map[int64][]store.Review) exportResult {
	e := exportResult{
		SampleID:         name,
		SampleRowID:      r.SampleRow,
		Condition:        r.Condition,
		Repetition:       r.Repetition,
		Response:         r.Response,
		Error:            r.Error,
		ErrorKind:        r.ErrorKind,
		Model:            r.Model,
		CacheReadTokens:  r.CacheReadTokens,
		CacheWriteTokens: r.CacheWriteTokens,
		CostSource:       r.CostSource,
		TokensIn:         r.TokensIn,
		TokensOut:        r.TokensOut,
		CostUSD:          r.CostUSD,
		LatencyMS:        r.LatencyMS,
		Attempts:         r.Attempts,
		Turns:            r.Turns,
		Retries:          r.Retries,
		ToolCalls:        r.ToolCalls,
		UnverifiedClaims: []string{},
		Scores:           []exportScore{},
		Judgements:       []exportJudgement{},
	}
	if e.ToolCalls == nil {
		e.ToolCalls = []store.ToolCall{}
	}
	if e.Retries == nil {
		e.Retries = []string{}
	}
	for _, j := range r.Judgements {
		ej := judgementExport(j)
		e.UnverifiedClaims = append(e.UnverifiedClaims, ej.UnverifiedClaims...)
		e.Judgements = append(e.Judgements, ej)
		for _, s := range j.Scores {
			e.Scores = append(e.Scores, scoreExport(j, s, reviews[s.ID]))
		}
	}
	return e
}

// judgementExport is a judgement as the JSON export gives it.
func judgementExport(j store.Judgement) exportJudgement {
	claims := j.UnverifiedClaims
	if claims == nil {
		claims = []string{}
	}
	return exportJudgement{
		Evaluator:        j.Evaluator,
		JudgeRepetition:  j.JudgeRepetition,
		Judge:            j.Judge,
		Seed:             j.Seed,
		Error:            j.Error,
		ErrorKind:        j.ErrorKind,
		Attempts:         j.Attempts,
		Detail:           j.Detail,
		Raw:              j.Raw,
		UnverifiedClaims: claims,
		TokensIn:         j.TokensIn,
		TokensOut:        j.TokensOut,
		CacheReadTokens:  j.CacheReadTokens,
		CacheWriteTokens: j.CacheWriteTokens,
		CostUSD:          j.CostUSD,
		LatencyMS:        j.LatencyMS,
	}
}

// scoreExport is a score of a judgement as the JSON export gives it, with
// its reviews.
func scoreExport(j store.Judgement, s store.Score, reviews []store.Review) exportScore {
	es := exportScore{
		ID:              s.ID,
		Evaluator:       j.Evaluator,
		Metric:          s.Metric,
		Value:           s.Value,
		Reasoning:       s.Reasoning,
		JudgeRepetition: j.JudgeRepetition,
		Judge:           j.Judge,
		Reviews:         []exportReview{},
	}
	for _, v := range reviews {
		es.Reviews = append(es.Reviews, exportReview{Reviewer: v.Reviewer, Verdict: v.Verdict, Value: v.Value, Note: v.Note, At: v.At})
	}
	return es
}

// exportSource is what an export of results reads first: the run's report,
// the dataset's own id of each sample by its row id, and the verdicts on
// each score.
func exportSource(ctx context.Context, db *store.DB, sc *Scope, r *Viewed) (*Viewed, map[int64]string, map[int64][]store.Review, error) {
	if r == nil {
		var err error
		if r, err = BuildReport(ctx, db, sc, nil); err != nil {
			return nil, nil, nil, err
		}
	}
	sampleIDs, err := db.SampleIDs(ctx, sc.Dataset.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	verdicts, err := db.Reviews(ctx, sc.Run.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	byScore := map[int64][]store.Review{}
	for _, v := range verdicts {
		byScore[v.ScoreID] = append(byScore[v.ScoreID], v)
	}
	return r, sampleIDs, byScore, nil
}

// ExportJSON writes {"run": {...}, "results": [...]}, one result per line,
// as the results are read.
func ExportJSON(ctx context.Context, db *store.DB, sc *Scope, r *Viewed, w io.Writer) error {
	r, names, reviews, err := exportSource(ctx, db, sc, r)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	rh := runHead(sc, r.Summary)
	if rh.ImportExtra, err = db.RunImportExtra(ctx, sc.Run.ID); err != nil {
		return err
	}
	if rh.Audit, err = db.LatestAudit(ctx, sc.Run.ID); err != nil {
		return err
	}
	head, err := json.MarshalIndent(rh, "", "  ")
	if err != nil {
		return fmt.Errorf("export run: %w", err)
	}
	fmt.Fprintf(bw, "{\"run\": %s,\n\"results\": [", head)
	enc := json.NewEncoder(bw)
	first := true
	err = db.EachResult(ctx, sc.Run.ID, func(res *store.Result) error {
		if !first {
			bw.WriteString(",")
		}
		first = false
		bw.WriteString("\n")
		return enc.Encode(toExport(res, names[res.SampleRow], reviews))
	})
	if err != nil {
		return fmt.Errorf("export results: %w", err)
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// csvHeader names the columns of the CSV export.
var csvHeader = []string{"run_id", "sample_id", "sample_row_id", "condition", "repetition", "evaluator", "metric",
	"judge_repetition", "value", "reasoning", "error", "unverified_claims", "tokens_in", "tokens_out", "cost_usd",
	"latency_ms", "attempts", "tool_calls", "error_kind", "score_id", "reviews", "reviewed_value", "judge", "model"}

// ExportCSV writes one row per result and metric of the run. A metric a
// result has no score for (an agent or judge error, or a result the judge
// did not sample) still gets its row, with an empty value and the error.
func ExportCSV(ctx context.Context, db *store.DB, sc *Scope, r *Viewed, w io.Writer) error {
	r, names, reviews, err := exportSource(ctx, db, sc, r)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("export csv: %w", err)
	}
	err = db.EachScored(ctx, sc.Run.ID, func(res *store.Result) error {
		for _, row := range csvRows(r.Metrics, res, names[res.SampleRow], reviews) {
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("export csv: %w", err)
	}
	cw.Flush()
	return cw.Error()
}

// csvRows are a result's rows: one per score of each metric, or one with the
// reason it has none.
func csvRows(metrics []report.Metric, res *store.Result, name string, reviews map[int64][]store.Review) [][]string {
	all := []string{}
	for _, j := range res.Judgements {
		all = append(all, j.UnverifiedClaims...)
	}
	claims, _ := json.Marshal(all)
	base := func(m report.Metric, judge string, judgeRep int, value, reasoning, errText string, kind store.ErrorKind, score int64) []string {
		row := []string{strconv.FormatInt(res.RunID, 10), textCell(name), strconv.FormatInt(res.SampleRow, 10), textCell(res.Condition),
			strconv.Itoa(res.Repetition), m.Evaluator, m.Name, strconv.Itoa(judgeRep), value, textCell(reasoning), textCell(errText),
			string(claims), strconv.Itoa(res.TokensIn), strconv.Itoa(res.TokensOut),
			strconv.FormatFloat(res.CostUSD, 'f', -1, 64), strconv.FormatInt(res.LatencyMS, 10),
			strconv.Itoa(res.Attempts), strconv.Itoa(len(res.ToolCalls)), string(kind), "", "0", "", textCell(judge), textCell(res.Model)}
		if score != 0 {
			row[19] = strconv.FormatInt(score, 10)
			if vs := reviews[score]; len(vs) > 0 {
				last := vs[0]
				for _, v := range vs {
					if !v.At.Before(last.At) {
						last = v
					}
				}
				row[20], row[21] = strconv.Itoa(len(vs)), strconv.FormatFloat(last.Value, 'f', -1, 64)
			}
		}
		return row
	}
	var rows [][]string
	for _, m := range metrics {
		found := false
		reason, kind := res.Error, res.ErrorKind
		for _, j := range res.Judgements {
			if j.Evaluator != m.Evaluator {
				continue
			}
			if reason == "" {
				reason, kind = j.Error, j.ErrorKind
			}
			for _, s := range j.Scores {
				if s.Metric == m.Name {
					found = true
					rows = append(rows, base(m, j.Judge, j.JudgeRepetition, strconv.FormatFloat(s.Value, 'f', -1, 64), s.Reasoning, res.Error, res.ErrorKind, s.ID))
				}
			}
		}
		if !found {
			rows = append(rows, base(m, "", 0, "", "", reason, kind, 0))
		}
	}
	return rows
}

// textCell keeps a spreadsheet from reading a text cell as a formula: a cell
// that starts with =, +, -, @, a tab or a carriage return gets a leading
// apostrophe, which spreadsheets show as text and hide.
func textCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
