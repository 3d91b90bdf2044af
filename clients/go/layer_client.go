// The client layer (hand-written; docs/clients.md): the client a merchant makes once.

package subsvc

import (
	"net/http"
	"time"
)

// Options of NewClient. Only APIKey is required.
type Options struct {
	// APIKey is a live (sk_…) or test (sk_test_…) key.
	APIKey string
	// BaseURL is the service's, without /v2; http://localhost:8080 when empty.
	BaseURL string
	// MaxRetries is how many times a call is retried after its first attempt; 2 when nil.
	MaxRetries *int
	// Timeout bounds each attempt; 30 s when zero.
	Timeout time.Duration
	// InitialDelay is the first backoff, doubled on each retry; 500 ms when zero.
	InitialDelay time.Duration
	// MaxDelay is the longest wait between two attempts; 20 s when zero.
	MaxDelay time.Duration
	// Headers are sent with every request (e.g. Prefer for the Prism mock).
	Headers map[string]string
	// Transport sends each attempt; http.DefaultTransport when nil.
	Transport http.RoundTripper
}

// Retries is a MaxRetries value: Options{MaxRetries: subsvc.Retries(0)} never retries.
func Retries(n int) *int { return &n }

// NewClient is the generated client behind the layer's transport: retries with one
// Idempotency-Key per call, and each error answer returned as its code's type (errors.As).
func NewClient(o Options) *APIClient {
	t := &retryTransport{base: o.Transport, maxRetries: 2, timeout: o.Timeout, initialDelay: o.InitialDelay, maxDelay: o.MaxDelay}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	if o.MaxRetries != nil {
		t.maxRetries = *o.MaxRetries
	}
	if t.timeout == 0 {
		t.timeout = 30 * time.Second
	}
	if t.initialDelay == 0 {
		t.initialDelay = 500 * time.Millisecond
	}
	if t.maxDelay == 0 {
		t.maxDelay = 20 * time.Second
	}
	cfg := NewConfiguration()
	base := o.BaseURL
	if base == "" {
		base = "http://localhost:8080"
	}
	cfg.Servers = ServerConfigurations{{URL: base}}
	cfg.HTTPClient = &http.Client{Transport: t}
	cfg.AddDefaultHeader("x-api-key", o.APIKey)
	for name, value := range o.Headers {
		cfg.AddDefaultHeader(name, value)
	}
	return NewAPIClient(cfg)
}
