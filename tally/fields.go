package tally

import (
	"errors"
	"strconv"
)

// fields reads the fields of one aggregate line in order, parsing numbers
// as it meets them: a report reads millions of them, and a plain loop over
// the bytes, which stops at the separator it finds, costs a third of
// cutting the line first and parsing each piece after.
type fields struct {
	rest string // what is left of the line
	end  bool   // the line's last field has been read
}

var errNoField = errors.New("a field is missing")

func lineFields(line string) fields { return fields{rest: line} }

// text returns the next field as it is written.
func (f *fields) text() (string, error) {
	if f.end {
		return "", errNoField
	}
	for i := 0; i < len(f.rest); i++ {
		if f.rest[i] == fieldSep {
			s := f.rest[:i]
			f.rest = f.rest[i+1:]
			return s, nil
		}
	}
	s := f.rest
	f.rest, f.end = "", true
	return s, nil
}

// name returns the next field as a name appendName wrote.
func (f *fields) name() (string, error) {
	s, err := f.text()
	if err != nil {
		return "", err
	}
	return readName(s)
}

// digits reads the next field when it is up to 15 decimal digits, which an
// int64 and a float64 both hold exactly; ok is false, and nothing is read,
// for any other field.
func (f *fields) digits() (n int64, ok bool) {
	if f.end {
		return 0, false
	}
	s, i := f.rest, 0
	for ; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		n = n*10 + int64(d) // past 15 digits n may wrap: it is not returned
	}
	switch {
	case i == 0 || i > 15:
		return 0, false
	case i == len(s):
		f.rest, f.end = "", true
	case s[i] == fieldSep:
		f.rest = s[i+1:]
	default:
		return 0, false
	}
	return n, true
}

// empty reads the next field when it is empty, and reports whether it was.
func (f *fields) empty() bool {
	if f.end || f.rest != "" && f.rest[0] != fieldSep {
		return false
	}
	if f.rest == "" {
		f.end = true
	} else {
		f.rest = f.rest[1:]
	}
	return true
}

// int returns the next field as an integer, as strconv.ParseInt reads it.
func (f *fields) int() (int64, error) {
	if n, ok := f.digits(); ok {
		return n, nil
	}
	s, err := f.text()
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

// float returns the next field as a float64, as strconv.ParseFloat reads it.
func (f *fields) float() (float64, error) {
	if n, ok := f.digits(); ok {
		return float64(n), nil
	}
	s, err := f.text()
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(s, 64)
}

// done reports an error unless every field of the line has been read.
func (f *fields) done() error {
	if !f.end {
		return errors.New("the line has more fields than it should")
	}
	return nil
}
