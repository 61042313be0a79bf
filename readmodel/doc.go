// Package readmodel is what assay derives from the record to show it: a
// run's report as a scope sees it (Viewed), the views its pages and its
// offline HTML file render, the charts, and the exports (JSON, CSV, HTML).
// The web server calls it to answer a page, through a Model that keeps
// what it derived (reports, samples tables, searches, reviews) while the
// record is unchanged and owns its background work until Close; the
// command line calls it to export a file, without the server. It reads
// the store and the report package's statistics and writes nothing but a
// finished run's headline, kept on the run the first time a list shows
// it (Headline; the runs list and the datasets' leaderboards read it); the
// tallies the pages read fast, kept in the database in step with the
// record, are its subpackage tally's.
package readmodel
