// Package framework holds the helpers of the end-to-end tests: it finds the
// repository and the tools `make tools` installs, builds the ingress-xds
// binary once per test binary, runs processes with their output kept for the
// failure report, starts real Envoys and in-process echo backends, and polls
// for conditions without ever turning a duration into a pass/fail criterion.
//
// Test packages that use it call Main from their TestMain so that the
// binaries it builds are removed when the tests end.
package framework
