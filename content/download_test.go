package content

import (
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"pith/content/download"
)

// A metadata file larger than the limit fails the download, naming the file and the
// setting, whether its size is unknown (nothing would stop it filling the temporary
// directory), declared or only in Content-Length.
func TestFetchTempLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	big := strings.Repeat("x", limit+1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/small.xml" {
			w.Write([]byte("<small/>"))
			return
		}
		if r.URL.Path == "/unsized.xml.gz" {
			w.(http.Flusher).Flush() // no Content-Length: chunked
		}
		w.Write([]byte(big))
	}))
	defer srv.Close()
	c := NewCore(Config{MaxMetadataSize: limit})
	d, err := download.New(download.Config{URL: srv.URL, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := c.FetchTemp(t.Context(), d, srv.URL+"/small.xml", download.Expect{Size: -1}, sha256.New)
	if err != nil {
		t.Fatalf("a file under the limit: %v", err)
	}
	f.Close()
	for _, tc := range []struct {
		name string
		want download.Expect
	}{
		{"unsized.xml.gz", download.Expect{Size: -1}},
		{"sized.xml.gz", download.Expect{Size: -1}},
		{"declared.xml.gz", download.Expect{Size: limit + 1}},
	} {
		f, _, err := c.FetchTemp(t.Context(), d, srv.URL+"/"+tc.name, tc.want, sha256.New)
		if err == nil {
			f.Close()
			t.Errorf("%s: %d bytes staged past the %d-byte limit", tc.name, len(big), limit)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.name) || !strings.Contains(msg, "1 MiB") || !strings.Contains(msg, "max-metadata-mib") {
			t.Errorf("%s: error %q does not name the file, the limit and the setting", tc.name, msg)
		}
	}
}
