package content

import (
	"testing"

	"pith/meta"
)

// A remote without download_concurrency downloads adaptively; a set value is fixed.
func TestDownloadConfigConcurrency(t *testing.T) {
	for _, tc := range []struct {
		attrs    string
		adaptive bool
		conc     int
	}{
		{`{}`, true, 0},
		{`{"download_concurrency": null}`, true, 0},
		{`{"download_concurrency": 5}`, false, 5},
	} {
		c, err := DownloadConfig(meta.Remote{Name: "r", URL: "http://127.0.0.1/", Attrs: []byte(tc.attrs)})
		if err != nil {
			t.Fatal(err)
		}
		if c.Adaptive != tc.adaptive || c.DownloadConcurrency != tc.conc {
			t.Errorf("%s: adaptive %v, concurrency %d; want %v, %d", tc.attrs, c.Adaptive, c.DownloadConcurrency, tc.adaptive, tc.conc)
		}
	}
}
