package metrics

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// Pool exposes the database pool's statistics, read at each scrape.
func (m *Metrics) Pool(pool *pgxpool.Pool) {
	if m == nil || pool == nil {
		return
	}
	m.reg.MustRegister(&poolCollector{pool: pool})
}

var (
	poolConns = prometheus.NewDesc("erpgate_db_pool_connections",
		"Connections of this replica's Postgres pool, by state (acquired, idle, constructing).", []string{"state"}, nil)
	poolMax = prometheus.NewDesc("erpgate_db_pool_max_connections",
		"The most connections the pool may open.", nil, nil)
	poolAcquires = prometheus.NewDesc("erpgate_db_pool_acquires_total",
		"Connections taken from the pool.", nil, nil)
	poolEmptyAcquires = prometheus.NewDesc("erpgate_db_pool_empty_acquires_total",
		"Acquisitions that had to wait for a connection (none was idle).", nil, nil)
	poolCanceled = prometheus.NewDesc("erpgate_db_pool_canceled_acquires_total",
		"Acquisitions given up before a connection came.", nil, nil)
	poolWait = prometheus.NewDesc("erpgate_db_pool_acquire_wait_seconds_total",
		"Time spent waiting for a connection, in total.", nil, nil)
)

type poolCollector struct{ pool *pgxpool.Pool }

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolConns, poolMax, poolAcquires, poolEmptyAcquires, poolCanceled, poolWait} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(s.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(s.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(s.ConstructingConns()), "constructing")
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolEmptyAcquires, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolCanceled, prometheus.CounterValue, float64(s.CanceledAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWait, prometheus.CounterValue, s.AcquireDuration().Seconds())
}
