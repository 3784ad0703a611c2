// Package load is the measuring machinery behind the scale-study benchmark scenarios:
//
//   - Wrk drives the wrk HTTP load generator over a list of URLs (the "content serving"
//     study: wrk against random package URLs) and parses numbers that a generated Lua
//     done() hook prints, never wrk's human-readable report.
//   - StartSampler samples the CPU and memory of selected processes from /proc while a
//     scenario runs; MachineCPU and CPUWindow give the whole machine's busy cores, so a
//     report can say how much of the box the load generator itself used.
//   - Hosts simulates many hosts running dnf at once against one repository (the
//     "many hosts downloading at once" study).
//   - Loop is a closed-loop load of Go clients over keep-alive connections, for loads
//     wrk cannot make (client certificates in the TLS handshake): several client setups
//     taking turns, with the server's CPU time per request.
//
// Everything here is Linux-only in practice: the sampler reads /proc and Hosts raises
// RLIMIT_NOFILE. Nothing asserts timings; callers report the numbers.
package load
