package store

import (
	"context"
	"testing"

	"assay/internal/pgtest"
)

// The scanners read what database/sql's own scan into an int, an int64 or
// a float64 reads, and refuse NULL as it does.
func TestColumnScannersReadAsDatabaseSQL(t *testing.T) {
	db, err := Open(context.Background(), pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const q = `SELECT 7, -9007199254740993, 2.5, '12', 3, '0.25'`
	var i, i2 int
	var n int64
	var f, f2, f3 float64
	if err := db.read.QueryRow(q).Scan(IntCol{&i}, Int64Col{&n}, floatCol{&f}, IntCol{&i2}, floatCol{&f2}, floatCol{&f3}); err != nil {
		t.Fatal(err)
	}
	var wi, wi2 int
	var wn int64
	var wf, wf2, wf3 float64
	if err := db.read.QueryRow(q).Scan(&wi, &wn, &wf, &wi2, &wf2, &wf3); err != nil {
		t.Fatal(err)
	}
	if i != wi || n != wn || f != wf || i2 != wi2 || f2 != wf2 || f3 != wf3 {
		t.Errorf("scanned %v %v %v %v %v %v, database/sql %v %v %v %v %v %v", i, n, f, i2, f2, f3, wi, wn, wf, wi2, wf2, wf3)
	}
	var kind ErrorKind
	if err := db.read.QueryRow(`SELECT 'timeout'`).Scan(textCol[ErrorKind]{&kind}); err != nil || kind != ErrorTimeout {
		t.Errorf("error kind %q, %v", kind, err)
	}
	if err := db.read.QueryRow(`SELECT NULL`).Scan(IntCol{&i}); err == nil {
		t.Error("NULL scanned into an int")
	}
	if err := db.read.QueryRow(`SELECT 'x'`).Scan(Int64Col{&n}); err == nil {
		t.Error("text that is no number scanned into an int64")
	}
}
