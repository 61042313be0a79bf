package config

// Bounds on what one run may ask for. Past them a run file, the run form
// and the API get an error that names the setting; a run stored before a
// bound existed fails with its reason instead of being planned.
const (
	MaxRepetitions      = 100       // execution.num_repetitions
	MaxConcurrent       = 200       // execution.max_concurrent
	MaxJudgeRepetitions = 20        // judge_repetitions
	MaxTasks            = 1_000_000 // samples × conditions × repetitions of one run
	MaxAnswerBytes      = 8 << 20   // one answer of the agent, or one reply of a model or judge
	// A json_schema assertion's schema: readying one takes time that grows
	// faster than its size (1,000 properties 50 ms, 10,000 0.8 s, 200,000
	// minutes), and an answer's format needs far less.
	MaxSchemaBytes   = 256 << 10
	MaxSchemaObjects = 1_000 // JSON objects in the schema: its subschemas and their keywords
	// Deadlines: an agent's answer or a judge call (a day), and a program's
	// tests (ten minutes).
	MaxTimeoutSeconds     = 86_400
	MaxCodeTimeoutSeconds = 600
)
