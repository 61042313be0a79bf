-- Only results whose agent called tools: counting tool calls for a report
-- reads these rows and no others.
CREATE INDEX results_with_tools ON results (run_id, condition) WHERE tool_calls != '[]';
