package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clipper "github.com/xce-sched/xce/internal/clip"
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

// FuzzSubmitLoop: any body POSTed to /v1/jobs goes through the handler
// and the real server loop over a real store (on a memory file system
// when there is one), on a fresh cluster each time: the handler never
// panics, its answer is 2xx or 4xx, an answer of 200 names one ID and
// queue per job, and the loop spends at most 1 s on the request (a hang
// guard: requests within the limits take milliseconds). The seeds are
// issue 29's attacks: the resreq ones are refused by the 4 KiB limit
// before any parsing.
func FuzzSubmitLoop(f *testing.F) {
	for _, seed := range []string{
		`{"jobs": [{"tasks_min": 1, "tasks_max": 1, "command": ["true"], "cwd": "/"}]}`,
		`{"jobs": [{"name": "a", "queue": "cons", "project": "p", "tasks_min": 2, "tasks_max": 2, "resreq": "select[mem>1] rusage[mem=2] span[ptile=2]", "estimate": 600, "script": "#!/bin/sh\ntrue\n", "cwd": "/tmp", "env": ["A=b"], "stdout": "out.%J", "rerunnable": true}]}`,
		`{"jobs": [{"name": "a", "array": "1-10:2%3", "depend": "done(1) || ended(\"a\")", "tasks_min": 1, "tasks_max": 1, "command": ["true"], "cwd": "/"}]}`,
		`{"jobs": [{"tasks_min": 5, "tasks_max": 5, "resreq": "2*{select[mem>1]} + 3*{span[hosts=1]}", "command": ["true"], "cwd": "/"}, {"tasks_min": 1, "tasks_max": 1, "gpu": "num=1", "command": ["true"], "cwd": "/"}]}`,
		`{"jobs": [{"tasks_min": 1, "tasks_max": 1, "exclusive": true, "command": ["true"], "cwd": "/"}]}`,
	} {
		f.Add([]byte(seed))
	}
	for _, a := range attacks() {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(SubmitRequest{Jobs: a.jobs}); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := newRig(t)
		w := r.post(body)
		if w.Code/100 != 2 && w.Code/100 != 4 {
			t.Fatalf("%d %s for %q", w.Code, w.Body.String(), clipper.Text(string(body), 200))
		}
		if time.Duration(r.took.Load()) > time.Second {
			t.Fatalf("the loop spent %v on %q", time.Duration(r.took.Load()), clipper.Text(string(body), 200))
		}
		if w.Code == http.StatusOK {
			var req SubmitRequest
			var rep SubmitReply
			if err := json.Unmarshal(body, &req); err != nil || json.Unmarshal(w.Body.Bytes(), &rep) != nil ||
				len(rep.IDs) != len(req.Jobs) || len(rep.Queues) != len(req.Jobs) || rep.IDs[0] != 1 {
				t.Fatalf("200 %s for %q", w.Body.String(), clipper.Text(string(body), 200))
			}
		}
	})
}
