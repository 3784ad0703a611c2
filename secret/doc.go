// Package secret keeps credentials out of sight: it redacts credentials in URLs from
// text bound for logs and task errors.
package secret
