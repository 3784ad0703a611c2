// Package config is pith's typed configuration: defaults, then an optional JSON config
// file, then PITH_* environment variables, then command-line flags, each overriding the
// one before. Decoding is strict (unknown keys are errors) and Validate names the
// setting that is wrong.
package config
