// The client layer (hand-written; docs/clients.md): retries with one Idempotency-Key per call.

package subsvc

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	mathrand "math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

var retriedStatuses = map[int]bool{429: true, 502: true, 503: true, 504: true}

// retryTransport sends a request as the client layer does: on a network error, 429, 502, 503 and
// 504 it retries at most maxRetries times, after the wait the answer asks for (Retry-After, else the
// RateLimit field's reset when no request is left) or a jittered exponential backoff; each attempt
// has its own timeout. A mutating request carries one Idempotency-Key, the caller's or one made
// here, reused by each retry, so that the service applies it once however many attempts reach it.
// An error answer (4xx, 5xx) is returned as its code's error type, with no response.
type retryTransport struct {
	base         http.RoundTripper
	maxRetries   int
	timeout      time.Duration
	initialDelay time.Duration
	maxDelay     time.Duration
}

var (
	rateLimitRemaining = regexp.MustCompile(`(?:^|;)\s*r=(\d+)`)
	rateLimitReset     = regexp.MustCompile(`(?:^|;)\s*t=(\d+)`)
)

// requestedWait is the wait an answer asks for, and whether it names one.
func requestedWait(h http.Header) (time.Duration, bool) {
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(v); err == nil {
			return time.Duration(s) * time.Second, true
		}
		if at, err := http.ParseTime(v); err == nil {
			return max(0, time.Until(at)), true
		}
	}
	// IETF RateLimit field: `"merchant";r=0;t=5` (no request left, reset in 5 s).
	v := h.Get("RateLimit")
	remaining, reset := rateLimitRemaining.FindStringSubmatch(v), rateLimitReset.FindStringSubmatch(v)
	if remaining != nil && reset != nil && remaining[1] == "0" {
		s, _ := strconv.Atoi(reset[1])
		return time.Duration(s) * time.Second, true
	}
	return 0, false
}

// backoff is the wait before retry number n (0 for the first): exponential, jittered over its upper half.
func (t *retryTransport) backoff(n int) time.Duration {
	ceiling := math.Min(float64(t.maxDelay), float64(t.initialDelay)*math.Pow(2, float64(n)))
	return time.Duration(ceiling/2 + mathrand.Float64()*ceiling/2)
}

func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// cancelOnClose ends an attempt's context once its body is read and closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
	}
	header := req.Header.Clone()
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if header.Get("Idempotency-Key") == "" {
			header.Set("Idempotency-Key", newIdempotencyKey())
		}
	}
	for retry := 0; ; retry++ {
		ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
		attempt := req.Clone(ctx)
		attempt.Header = header
		attempt.Body = io.NopCloser(bytes.NewReader(body))
		attempt.ContentLength = int64(len(body))
		resp, err := t.base.RoundTrip(attempt)
		var wait time.Duration
		switch {
		case err != nil:
			cancel()
			// The caller's own cancellation is final; a network error or the attempt's timeout is retried.
			if req.Context().Err() != nil || retry >= t.maxRetries {
				return nil, err
			}
			wait = t.backoff(retry)
		case retriedStatuses[resp.StatusCode] && retry < t.maxRetries:
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			cancel()
			asked, ok := requestedWait(resp.Header)
			if !ok {
				asked = t.backoff(retry)
			}
			wait = asked
		case resp.StatusCode >= 400:
			answer, readErr := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			cancel()
			if readErr != nil {
				return nil, readErr
			}
			return nil, problemFrom(resp.StatusCode, resp.Header, answer)
		default:
			resp.Body = cancelOnClose{resp.Body, cancel}
			return resp, nil
		}
		select {
		case <-time.After(min(wait, t.maxDelay)):
		case <-req.Context().Done():
			return nil, errors.Join(req.Context().Err(), fmt.Errorf("waiting to retry %s %s", req.Method, req.URL))
		}
	}
}
