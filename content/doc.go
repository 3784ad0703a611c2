// Package content holds what every content type shares: the rules for a unit's
// relative path and the conversion of a stored remote into downloader settings.
// Content types live in subpackages (content/file) and import meta, blob and task,
// never api or serve.
package content
