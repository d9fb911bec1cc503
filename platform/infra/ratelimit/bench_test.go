package ratelimit

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func BenchmarkAcquireRelease(b *testing.B) {
	pool := pgtest.NewPool(b)
	var sites []string
	for i := 0; i < 64; i++ {
		sites = append(sites, newSite(b, pool))
	}
	l := New(pool, Limits{UserConcurrency: 1000, UserPerMinute: 1 << 30, SiteConcurrency: 1000, SitePerMinute: 1 << 30}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go l.Janitor(ctx, time.Minute)
	for _, par := range []int{1, 4, 16} {
		b.Run(fmt.Sprint("callers=", par), func(b *testing.B) {
			var n atomic.Int64
			b.SetParallelism(par)
			b.RunParallel(func(pb *testing.PB) {
				i := n.Add(1)
				key := fmt.Sprint("user:", i)
				site := sites[int(i)%len(sites)]
				for pb.Next() {
					rel, err := l.Acquire(ctx, site, key)
					if err != nil {
						b.Fatal(err)
					}
					rel()
				}
			})
		})
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	pool := pgtest.NewPool(b)
	ctx := context.Background()
	for _, par := range []int{1, 4, 16} {
		b.Run(fmt.Sprint("callers=", par), func(b *testing.B) {
			b.SetParallelism(par)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					var n int
					if err := pool.QueryRow(ctx, `SELECT $1::int`, 1).Scan(&n); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
