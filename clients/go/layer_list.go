// The client layer (hand-written; docs/clients.md): every page of a list operation.

package subsvc

import (
	"iter"
	"net/http"
)

// page is what every list operation answers: {data, hasMore, nextCursor}.
type page[T any] interface {
	GetData() []T
	GetHasMore() bool
	GetNextCursor() string
}

// listRequest is a generated list request: its cursor set by StartingAfter, sent by Execute.
type listRequest[R any, P any] interface {
	StartingAfter(string) R
	Execute() (P, *http.Response, error)
}

// All iterates over every item of every page of a list operation, fetching each page as the loop
// reaches it; an error ends the loop after it is yielded:
//
//	for s, err := range subsvc.All[subsvc.Subscription](client.SubscriptionsAPI.ListSubscriptions(ctx).Limit(100)) { … }
func All[T any, P page[T], R listRequest[R, P]](request R) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			p, _, err := request.Execute()
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range p.GetData() {
				if !yield(item, nil) {
					return
				}
			}
			if !p.GetHasMore() || p.GetNextCursor() == "" {
				return
			}
			request = request.StartingAfter(p.GetNextCursor())
		}
	}
}
