// Package bench holds the load scenarios behind `pith bench`. Each drives a running pith
// over HTTP the way clients do and reports a table; none asserts timings.
package bench
