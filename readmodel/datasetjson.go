package readmodel

import "assay/store"

// DatasetJSON is a dataset as the API and `assay import --json` describe it.
type DatasetJSON struct {
	ID          int64  `json:"dataset_id"`
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Samples     int    `json:"samples"`
	SHA256      string `json:"sha256"`
	Format      string `json:"format"`
	QuestionKey string `json:"question_key,omitempty"`
	AnswerKey   string `json:"answer_key,omitempty"`
	CreatedAt   string `json:"created_at"`
	Created     *bool  `json:"created,omitempty"`
}

// NewDatasetJSON describes d for the API.
func NewDatasetJSON(d *store.Dataset) DatasetJSON {
	return DatasetJSON{
		ID:          d.ID,
		Name:        d.Name,
		Kind:        string(d.Kind),
		Samples:     d.Samples,
		SHA256:      d.SHA256,
		Format:      d.Format,
		QuestionKey: d.QuestionKey,
		AnswerKey:   d.AnswerKey,
		CreatedAt:   d.CreatedAt.Format("2006-01-02T15:04:05Z"),
	}
}
