package web

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// apiOp is one route of the JSON API: how it is called, what it answers,
// and the handler that answers it. The routes are registered from apiOps
// and the OpenAPI document is made from them, so the two cannot differ.
type apiOp struct {
	method, path, summary string
	handler               func(*Server, echo.Context) error
	query                 []apiParam // query parameters
	body                  string     // the request's media type: application/json or multipart/form-data
	bodyFields            []apiParam // the body's fields
	ok                    int        // the status of success
	answer                string     // what a success answers
	errors                []int      // the statuses of failure it may answer, beyond 401, 403 and 500
	public                bool       // reachable without a token
}

// apiParam is a parameter or a body field: its name, JSON type and meaning.
type apiParam struct{ name, typ, about string }

// apiOps are the JSON API's routes.
func apiOps() []apiOp { return apiRoutes }

// apiRoutes are apiOps'; set in init, since the document they make is one of them.
var apiRoutes []apiOp

func init() { apiRoutes = append(apiRoutes, apiRouteList...) }

var apiRouteList = []apiOp{
	{method: "GET", path: "/api/openapi.json", summary: "this document: the JSON API's routes, parameters, bodies and answers", handler: (*Server).apiOpenAPI,
		ok: 200, answer: "an OpenAPI 3.1 document", public: true},
	{method: "GET", path: "/api/datasets", summary: "the datasets, newest first", handler: (*Server).apiDatasets, ok: 200, answer: "an array of datasets"},
	{method: "POST", path: "/api/datasets", summary: "upload a dataset", handler: (*Server).apiUploadDataset, body: "multipart/form-data",
		bodyFields: []apiParam{{"file", "string", "the dataset's file (JSONL, JSON, CSV)"}, {"name", "string", "its name; the file's by default"},
			{"kind", "string", "qa, mcq, math or code; detected by default"}, {"question_key", "string", "the question's field"}, {"answer_key", "string", "the answer's field"}},
		ok: 201, answer: "the dataset; 200 when the same bytes were uploaded before", errors: []int{413, 422}},
	{method: "GET", path: "/api/datasets/:id", summary: "a dataset", handler: (*Server).apiDataset, ok: 200, answer: "the dataset", errors: []int{404}},
	{method: "GET", path: "/api/datasets/:id/samples", summary: "a dataset's samples", handler: (*Server).apiSamples,
		query: []apiParam{{"offset", "integer", "the first sample's place"}, {"limit", "integer", "how many"}}, ok: 200, answer: "an array of samples", errors: []int{404}},
	{method: "GET", path: "/api/conditions", summary: "the conditions", handler: (*Server).apiConditions, ok: 200, answer: "an array of conditions"},
	{method: "POST", path: "/api/conditions", summary: "make a condition", handler: (*Server).apiCreateCondition, body: "application/json",
		bodyFields: conditionFields, ok: 201, answer: `{"id", "condition"}`, errors: []int{409, 422}},
	{method: "GET", path: "/api/conditions/:id", summary: "a condition", handler: (*Server).apiCondition, ok: 200, answer: "the condition", errors: []int{404}},
	{method: "PUT", path: "/api/conditions/:id", summary: "change a condition", handler: (*Server).apiUpdateCondition, body: "application/json",
		bodyFields: conditionFields, ok: 200, answer: "the condition", errors: []int{404, 409, 422}},
	{method: "DELETE", path: "/api/conditions/:id", summary: "delete a condition no run uses", handler: (*Server).apiDeleteCondition, ok: 204, errors: []int{404, 409}},
	{method: "GET", path: "/api/rubrics", summary: "the saved rubrics", handler: (*Server).apiRubrics, ok: 200, answer: "an array of rubrics"},
	{method: "GET", path: "/api/rubrics/:name", summary: "a saved rubric: its YAML and the rubric as read", handler: (*Server).apiGetRubric, ok: 200, answer: "the rubric", errors: []int{404}},
	{method: "PUT", path: "/api/rubrics/:name", summary: "save a rubric, new or in place of one", handler: (*Server).apiPutRubric, body: "application/json",
		bodyFields: []apiParam{{"source", "string", "the rubric's YAML (metrics: …)"}}, ok: 200, answer: "the rubric", errors: []int{422}},
	{method: "DELETE", path: "/api/rubrics/:name", summary: "delete a saved rubric", handler: (*Server).apiDeleteRubric, ok: 204, errors: []int{404}},
	{method: "GET", path: "/api/runs", summary: "the runs, newest first", handler: (*Server).apiRuns,
		query: []apiParam{{"limit", "integer", "a page's size"}, {"offset", "integer", "the page's first run"}}, ok: 200, answer: "an array of runs"},
	{method: "GET", path: "/api/runs/:id", summary: "a run's summary: the object assay run --json prints, and while it executes who executes it", handler: (*Server).apiRun,
		ok: 200, answer: "the summary", errors: []int{404}},
	{method: "GET", path: "/api/runs/:id/report", summary: "a run's summary (as GET /api/runs/:id)", handler: (*Server).apiRun, ok: 200, answer: "the summary", errors: []int{404}},
	{method: "POST", path: "/api/runs/import", summary: "import a finished run from its EEE or k-eval files", handler: (*Server).apiImportRun, body: "multipart/form-data",
		bodyFields: []apiParam{{"results", "string", "the aggregate file"}, {"instances", "string", "the instances file"}}, ok: 201,
		answer: "the object assay import --json prints", errors: []int{413, 422}},
	{method: "POST", path: "/api/runs", summary: "launch a run", handler: (*Server).apiLaunchRun, body: "application/json",
		bodyFields: []apiParam{{"dataset_id", "integer", "the dataset"}, {"conditions", "array", "the conditions' names"},
			{"run", "object", "the run file's settings but its dataset and conditions (docs/run-file.schema.json)"}},
		ok: 201, answer: `{"run_id", "total_tasks", "url"}`, errors: []int{404, 422}},
	{method: "POST", path: "/api/runs/:id/cancel", summary: "cancel a run; its finished results are kept", handler: (*Server).apiCancelRun, ok: 200, answer: "the run's summary", errors: []int{404, 409}},
	{method: "POST", path: "/api/runs/:id/resume", summary: "go on with a cancelled, failed or budget-stopped run", handler: (*Server).apiResumeRun, ok: 202, answer: `{"run_id", "status"}`, errors: []int{404, 409, 422}},
	{method: "POST", path: "/api/runs/:id/retry-errors", summary: "do a finished run's failed tasks and judge calls again", handler: (*Server).apiRetryErrors,
		ok: 202, answer: `{"run_id", "retrying", "rejudging"}`, errors: []int{404, 409, 422}},
	{method: "POST", path: "/api/runs/:id/rejudge", summary: "judge a finished run's answers again: a new run sharing its answers, making only the judge calls, started at once",
		handler: (*Server).apiRejudge, body: "application/json",
		bodyFields: []apiParam{{"judge", "object", "the judge, as in a run file"}, {"judges", "array", "a panel"}, {"panel", "string", "how a panel's scores combine"},
			{"judge_repetitions", "integer", "how often each answer is judged"}, {"evaluators", "array", "the evaluators"}, {"rubrics", "object", "the run's own rubrics"}},
		ok: 202, answer: `{"run_id", "url"}`, errors: []int{404, 409, 422}},
	{method: "POST", path: "/api/runs/:id/audit", summary: "audit a finished run's judge, in the background", handler: (*Server).apiStartAudit, body: "application/json",
		bodyFields: []apiParam{{"probes", "array", "verbosity, position, self"}, {"samples", "integer", "samples per probe"}, {"budget", "number", "the most it may cost, in USD"}},
		ok:         202, answer: `{"run_id", "estimate"}`, errors: []int{404, 409, 422}},
	{method: "GET", path: "/api/runs/:id/audit", summary: "the latest judge audit, as assay audit --json prints it, with running", handler: (*Server).apiAudit,
		ok: 200, answer: "the audit", errors: []int{404}},
	{method: "GET", path: "/api/runs/:id/reviews", summary: "every verdict, with its score's metric, condition, sample and repetition", handler: (*Server).apiReviews,
		ok: 200, answer: `{"reviews": [...]}`, errors: []int{404}},
	{method: "POST", path: "/api/runs/:id/reviews", summary: "record a verdict on a score: agree, override; or a note for one's verdict, or withdraw it", handler: (*Server).apiRecordReview,
		body: "application/json", bodyFields: []apiParam{{"score_id", "integer", "the score"}, {"verdict", "string", "agree, override, note or withdraw"},
			{"value", "number", "an override's value, on the metric's scale"}, {"note", "string", "why"}, {"reviewer", "string", "who, on a server without tokens"}},
		ok: 201, answer: "the verdict; 200 with {\"withdrawn\"} for withdraw", errors: []int{404, 422}},
	{method: "GET", path: "/api/runs/:id/agreement", summary: "review coverage and judge–reviewer agreement per metric, as the report shows them", handler: (*Server).apiAgreement,
		ok: 200, answer: `{"verdicts", "reviewed", "reviewers", "metrics", "judge_errors"}`, errors: []int{404}},
	{method: "GET", path: "/api/runs/:id/review-next", summary: "the next answers nobody has reviewed, in a review order, each with the probability its sample is drawn with: reviewed whole and in order, they correct the judge's mean (the summary's ppi)",
		handler: (*Server).apiReviewNext, query: []apiParam{{"n", "integer", "how many, 1 to 500 (10)"}, {"order", "string", "active (where the judge is least certain first; the default) or random"}},
		ok: 200, answer: `{"order", "answers": [{"score_id", "sample_id", "sample_row_id", "condition", "model", "repetition", "evaluator", "metric", "probability"}]}`, errors: []int{404, 422}},
	{method: "POST", path: "/api/runs/:id/review-links", summary: "make a review link for one person", handler: (*Server).apiCreateReviewLink, body: "application/json",
		bodyFields: []apiParam{{"name", "string", "whom it is for: their verdicts carry it"}}, ok: 201, answer: `{"token", "url", "name"}`, errors: []int{404, 422}},
	{method: "DELETE", path: "/api/runs/:id/review-links/:token", summary: "revoke a review link; its verdicts are kept", handler: (*Server).apiRevokeReviewLink, ok: 204, errors: []int{404}},
}

var conditionFields = []apiParam{{"name", "string", "the condition's name"}, {"system_prompt", "string", "what the agent is told"},
	{"mcp_servers", "array", "its MCP servers: {name, transport, command, args, env, url, headers}"},
	{"require_mcp_tool_use", "boolean", "an answer without an MCP tool call fails"}, {"require_mcp_tool_success", "boolean", "an answer without a successful one fails"}}

// apiOpenAPI handles GET /api/openapi.json.
func (s *Server) apiOpenAPI(c echo.Context) error {
	return c.JSONBlob(http.StatusOK, OpenAPI())
}

var pathParam = regexp.MustCompile(`:([a-z_]+)`)

// OpenAPI is the JSON API's OpenAPI 3.1 document, made from apiOps.
func OpenAPI() []byte {
	paths := map[string]map[string]any{}
	for _, op := range apiOps() {
		p := pathParam.ReplaceAllString(op.path, "{$1}")
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(op.method)] = op.operation()
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "assay", "version": "1",
			"description": "assay's JSON API. Send Authorization: Bearer TOKEN on a server with tokens (an owner's for anything that changes something; a reviewer's may record verdicts, or a review link's token on its run's reviews)."},
		"components": map[string]any{"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
			"schemas": map[string]any{"Error": map[string]any{"type": "object", "properties": map[string]any{
				"error": map[string]any{"type": "string", "description": "what went wrong, for a person to read"}}}}},
		"security": []any{map[string]any{"bearer": []any{}}},
		"paths":    paths,
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return b
}

// operation is op as OpenAPI writes it.
func (op apiOp) operation() map[string]any {
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(op.path, -1) {
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": map[bool]string{true: "integer", false: "string"}[m[1] == "id"]}})
	}
	for _, q := range op.query {
		params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.about, "schema": map[string]any{"type": q.typ}})
	}
	o := map[string]any{"summary": op.summary, "operationId": strings.ToLower(op.method) + strings.NewReplacer("/", "_", ":", "", ".", "_", "-", "_").Replace(op.path)}
	if params != nil {
		o["parameters"] = params
	}
	if op.body != "" {
		props := map[string]any{}
		for _, f := range op.bodyFields {
			props[f.name] = map[string]any{"type": f.typ, "description": f.about}
		}
		o["requestBody"] = map[string]any{"required": true, "content": map[string]any{op.body: map[string]any{"schema": map[string]any{"type": "object", "properties": props}}}}
	}
	responses := map[string]any{}
	ok := map[string]any{"description": http.StatusText(op.ok)}
	if op.answer != "" {
		ok["description"] = op.answer
		ok["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}
	}
	responses[strconv.Itoa(op.ok)] = ok
	errs := slices.Clone(op.errors)
	if !op.public {
		errs = append(errs, 401, 403)
	}
	for _, code := range append(errs, 500) {
		responses[strconv.Itoa(code)] = map[string]any{"description": errorMeaning[code],
			"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
	}
	o["responses"] = responses
	if op.public {
		o["security"] = []any{}
	}
	return o
}

// errorMeaning says what each failure status means in the API.
var errorMeaning = map[int]string{
	401: "no access token, or one not valid (429 with Retry-After after ten wrong ones from an address)",
	403: "the token's role may not do this",
	404: "no such thing",
	409: "it conflicts with how things stand (a run under way, a name taken)",
	413: "the upload is larger than the server takes (--max-upload)",
	422: "the request is not right: the message names the field",
	500: "the server failed; the log says why",
}
