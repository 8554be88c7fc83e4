package api

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzDecodeSubmit: any body given to POST /v1/jobs is decoded strictly
// without panicking: it is a SubmitRequest, or an *Error with status 400
// (413 above MaxBody) and a short message.
func FuzzDecodeSubmit(f *testing.F) {
	for _, seed := range []string{
		`{"jobs": [{"tasks_min": 1, "tasks_max": 1, "command": ["true"], "cwd": "/"}]}`,
		`{"jobs": [{"tasks_min": 1, "tasks_max": 1, "script": "#!/bin/sh\n", "cwd": "/", "env": ["A=b"]}]}`,
		`{"jobs": [{"tasks_min": 1, "bogus": 1}]}`,
		`{"jobs": []} {}`,
		`{"jobs": [{"tasks_min": 1e400}]}`,
		`[`, ``, `null`, `{"jobs": null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/v1/jobs", bytes.NewReader(body))
		w := httptest.NewRecorder()
		var req SubmitRequest
		err := decode(w, r, &req)
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) || (e.Status != http.StatusBadRequest && e.Status != http.StatusRequestEntityTooLarge) {
			t.Fatalf("%q: %v", body, err)
		}
		if len(e.Msg) > 1000 {
			t.Fatalf("a message of %d bytes", len(e.Msg))
		}
	})
}
