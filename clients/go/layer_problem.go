// The client layer (hand-written; docs/clients.md): the base of its error types.

package subsvc

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// ProblemError is an error answer of the API (RFC 9457). Each code of the spec has its own type
// embedding it (problems.go), for errors.As; errors.As(err, &*ProblemError) matches them all.
type ProblemError struct {
	Status int
	Code   string
	Title  string
	Detail string
	// RequestID is the answer's X-Request-Id, to quote when reporting a problem.
	RequestID string
	// Header is the answer's header (Retry-After, RateLimit, ...).
	Header http.Header
	// Body is the whole problem document, its `errors` included.
	Body []byte
}

func (e *ProblemError) Error() string {
	text := e.Detail
	if text == "" {
		text = e.Title
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, text)
}

// problemFrom reads an error answer into its code's error type.
func problemFrom(status int, header http.Header, body []byte) error {
	var fields struct {
		Code   string `json:"code"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &fields) != nil {
		// Not a problem (a proxy's page): the status alone says what happened.
		fields.Detail = string(body[:min(len(body), 500)])
	}
	p := &ProblemError{Status: status, Code: fields.Code, Title: fields.Title, Detail: fields.Detail, RequestID: header.Get("X-Request-Id"), Header: header, Body: body}
	return problemType(p)
}
