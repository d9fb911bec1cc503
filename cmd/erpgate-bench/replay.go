package main

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
)

// replayCache is the simulator's replay mode: the first answer to each
// request (method, request URI and credentials) is the simulator's own,
// and later ones are that answer's bytes again. people_path turns it on
// while it measures CPU per call, so that the ERP's side of each call costs
// little and the gateway, on its own core, is what bounds the rate: the
// gateway's work is the same, since it reads the same bytes. Only 200
// answers to GET requests are kept.
type replayCache struct {
	mu      sync.RWMutex
	answers map[string]*replayAnswer
}

type replayAnswer struct {
	header http.Header
	body   []byte
}

func replayKey(r *http.Request) string {
	return r.Method + " " + r.RequestURI + "\x00" + r.Header.Get("Authorization") + "\x00" + r.Header.Get("Cookie")
}

// serve answers r from the cache, or from next and keeps the answer.
func (c *replayCache) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	key := replayKey(r)
	c.mu.RLock()
	a := c.answers[key]
	c.mu.RUnlock()
	if a != nil {
		h := w.Header()
		for k, v := range a.header {
			h[k] = v
		}
		_, _ = w.Write(a.body)
		return
	}
	rec := &recordingWriter{ResponseWriter: w, status: http.StatusOK}
	next.ServeHTTP(rec, r)
	if r.Method != http.MethodGet || rec.status != http.StatusOK {
		return
	}
	kept := &replayAnswer{header: w.Header().Clone(), body: bytes.Clone(rec.body.Bytes())}
	kept.header.Del("Date")
	kept.header["Content-Length"] = []string{strconv.Itoa(len(kept.body))}
	c.mu.Lock()
	if c.answers == nil {
		c.answers = map[string]*replayAnswer{}
	}
	c.answers[key] = kept
	c.mu.Unlock()
}

func (c *replayCache) reset() {
	c.mu.Lock()
	c.answers = nil
	c.mu.Unlock()
}

// recordingWriter passes an answer on and keeps a copy of its status and
// body.
type recordingWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *recordingWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.wrote = true
	w.body.Write(p)
	return w.ResponseWriter.Write(p)
}
