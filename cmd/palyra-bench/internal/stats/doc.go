// Package stats summarises the measurements taken by palyra-bench.
//
// A [Sample] collects observations, either durations ([Sample.Add]) or plain
// numbers ([Sample.AddValue]), and answers the order statistics the report
// shows: [Sample.Median], [Sample.P99] and [Sample.Percentile].
//
// Recording is cheap: Add appends to a slice and nothing is sorted until a
// rank statistic is asked for. The sorted copy is then cached and reused until
// the next Add, so a scenario that records in a hot loop and summarises once
// pays for one sort.
//
// # Units
//
// A duration recorded with Add is stored as a count of nanoseconds, so every
// statistic of such a sample is in nanoseconds too; divide by
// float64(time.Microsecond) to get microseconds. Do not mix Add and AddValue
// on one sample unless the values share that unit.
//
// # Percentile definition
//
// Percentiles interpolate linearly between the two nearest ranks (the
// definition NumPy uses by default, also known as Hyndman and Fan type 7 or
// Excel's PERCENTILE.INC): for n sorted values x[0..n-1] and p in [0, 100],
// the position is h = (n-1)·p/100 and the result is
// x[⌊h⌋] + (h-⌊h⌋)·(x[⌊h⌋+1]-x[⌊h⌋]). Hence the median of 1..100 is 50.5 and
// its 99th percentile is 99.01. The result never lies outside the smallest
// and largest observations, and with few observations the high percentiles
// approach the largest.
//
// # Empty samples
//
// Every statistic of an empty sample is 0. Callers that must tell "no data"
// from "zero" check [Sample.Len] first.
//
// # Concurrency
//
// A Sample is not safe for concurrent use, not even for concurrent reads,
// because reads may build the sorted cache. Give each goroutine its own
// Sample and combine them with [Sample.Merge].
package stats
