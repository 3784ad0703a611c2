package s3

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"pith/blob"
	"pith/blob/driver/tempfile"
	"pith/blob/drivertest"
	"pith/internal/tests3"
)

func TestMain(m *testing.M) { os.Exit(tests3.Main(m)) }

func newDriver(t testing.TB) *Driver { return newDriverAt(t, tests3.URL(t)) }

func newDriverAt(t testing.TB, url string) *Driver {
	t.Helper()
	cfg, err := ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.PartSize = 5 << 20 // S3's minimum, so multi-part uploads happen in tests
	d, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) blob.Driver { return newDriver(t) })
}

// What a process that died while spooling a write leaves: a spool file named as this
// host's that no process holds locked.
func TestSweep(t *testing.T) {
	drivertest.RunSweep(t, func(t *testing.T) blob.Driver { return newDriver(t) }, func(t *testing.T, d blob.Driver) func() bool {
		f, err := os.CreateTemp("", tempfile.Pattern(spoolPrefix)+"*")
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("half spooled")
		f.Close()
		return func() bool { _, err := os.Stat(f.Name()); return os.IsNotExist(err) }
	})
}

// The same suite against a second S3 implementation, the versitygw gateway.
func TestConformanceVersityGW(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) blob.Driver { return newDriverAt(t, tests3.VersityURL(t)) })
}

// A blob larger than a part goes up as a multipart upload; a presigned URL serves it
// with the content type and disposition asked for.
func TestMultipartAndPresignedURL(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"minio": tests3.URL, "versitygw": tests3.VersityURL} {
		t.Run(name, func(t *testing.T) { testMultipartAndPresignedURL(t, newDriverAt(t, url(t))) })
	}
}

func testMultipartAndPresignedURL(t *testing.T, d *Driver) {
	ctx := context.Background()
	s, _ := blob.New(d, nil)
	data := bytes.Repeat([]byte("0123456789abcdef"), 12<<16) // 12 MiB: three parts
	dg, err := s.Put(ctx, bytes.NewReader(data), blob.Expect{Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	u, err := d.URL(ctx, dg.SHA256, blob.URLOptions{ContentType: "application/x-rpm", ContentDisposition: "attachment;filename=x.rpm"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("presigned GET: %d, %d bytes", resp.StatusCode, len(body))
	}
	if resp.Header.Get("Content-Type") != "application/x-rpm" || !strings.Contains(resp.Header.Get("Content-Disposition"), "x.rpm") {
		t.Errorf("response overrides: %v", resp.Header)
	}
	// Tampering with the signature is refused.
	resp, err = http.Get(strings.Replace(u, "X-Amz-Signature=", "X-Amz-Signature=00", 1))
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("tampered URL: %d, want 403", resp.StatusCode)
		}
	}
	// A URL is signed for one method: a HEAD needs a URL signed for HEAD.
	hu, err := d.URL(ctx, dg.SHA256, blob.URLOptions{Method: http.MethodHead, ContentType: "application/x-rpm"})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Head(hu); err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(len(data)) {
		t.Errorf("presigned HEAD: %v %v", resp, err)
	}
	if resp, err := http.Head(u); err == nil && resp.StatusCode == 200 {
		t.Logf("this server accepts a HEAD on a URL signed for GET (AWS S3 and MinIO do not)")
	}
}

func TestParseURL(t *testing.T) {
	c, err := ParseURL("s3://key:se%2Fcret@127.0.0.1:9000/bucket?region=eu-1&path_style=true&insecure=true")
	if err != nil || c.Endpoint != "127.0.0.1:9000" || c.Bucket != "bucket" || c.SecretKey != "se/cret" || !c.PathStyle || !c.Insecure || c.Region != "eu-1" {
		t.Fatalf("%+v %v", c, err)
	}
	for _, bad := range []string{"http://k:hunter2@x/b", "s3://k:hunter2@host", "s3://k:hunter2@host/a/b", "s3://k:hunter2@host/b?insecure=maybe"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error leaks the secret: %v", err)
		}
	}
}
