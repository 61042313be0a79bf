package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
)

// database/sql scans an INTEGER or REAL column into an int64 or a float64
// through reflection, and into an int through text, formatting the driver's
// int64 and parsing it back. The few scans that read tens of thousands of
// rows (the samples table, the report, exports) take the driver's value as
// it is through these.

// IntCol scans an INTEGER column into an int.
type IntCol struct{ P *int }

func (c IntCol) Scan(src any) error {
	n, err := int64Of(src)
	*c.P = int(n)
	return err
}

// Int64Col scans an INTEGER column into an int64.
type Int64Col struct{ P *int64 }

func (c Int64Col) Scan(src any) error {
	n, err := int64Of(src)
	*c.P = n
	return err
}

// floatCol scans a REAL column into a float64.
type floatCol struct{ p *float64 }

func (c floatCol) Scan(src any) error {
	switch v := src.(type) {
	case float64:
		*c.p = v
		return nil
	case int64:
		*c.p = float64(v)
		return nil
	case string:
		return parsedFloat(c.p, v)
	case []byte:
		return parsedFloat(c.p, string(v))
	}
	return fmt.Errorf("converting %T to float64", src)
}

func int64Of(src any) (int64, error) {
	switch v := src.(type) {
	case int64:
		return v, nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	case []byte:
		return strconv.ParseInt(string(v), 10, 64)
	}
	return 0, fmt.Errorf("converting %T to an integer", src)
}

func parsedFloat(p *float64, s string) error {
	v, err := strconv.ParseFloat(s, 64)
	*p = v
	return err
}

// textCol scans a TEXT column into a string type of the store's own, which
// database/sql converts through reflection.
type textCol[T ~string] struct{ p *T }

func (c textCol[T]) Scan(src any) error {
	switch v := src.(type) {
	case string:
		*c.p = T(v)
		return nil
	case []byte:
		*c.p = T(v)
		return nil
	}
	return fmt.Errorf("converting %T to text", src)
}

// EachRow runs a query and calls f for each row.
func EachRow(ctx context.Context, q Querier, query string, args []any, f func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
