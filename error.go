package assay

import (
	"errors"
	"fmt"
)

// Error codes that the web layer turns into HTTP status in one place.
const (
	EINVALID  = "invalid"
	ENOTFOUND = "not_found"
	ECONFLICT = "conflict"
	ETOOLARGE = "too_large"
	EINTERNAL = "internal"
)

// ErrNotFound is returned when a requested record does not exist.
var ErrNotFound = &Error{Code: ENOTFOUND, Message: "not found"}

// Error is a domain error whose Message is safe to show a user. Cause, when
// set, is what went wrong underneath, for logs and errors.Is: never shown.
type Error struct {
	Code    string
	Message string
	Cause   error
}

// Error implements the error interface: the safe message, then the cause.
func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Message + ": " + e.Cause.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Wrapf returns an *Error with a user-safe message that keeps cause
// beneath it.
func Wrapf(code string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// Errorf returns an *Error with the given code and a formatted, user-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or EINTERNAL.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-safe message of err, or a generic one.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}
