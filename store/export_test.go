package store

// DeleteBatch is how many results a transaction of a run's deletion
// deletes, for tests to make it small.
var DeleteBatch = &deleteBatch

// ImportBatch is how many results a transaction of an import stores.
var ImportBatch = &importBatch

// SamplesPerDelete is how many samples a statement of a dataset's deletion deletes.
var SamplesPerDelete = &samplesPerDelete
