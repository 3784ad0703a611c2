package api_test

import (
	"encoding/json"
	"io"
	"mime/multipart"
	"strings"
	"testing"

	"pith/api/rest"
)

// A form body is bounded as a whole: fields (not files) share one budget of
// rest.MaxBody bytes, and a body holds at most rest.MaxFields fields. Beyond either,
// nothing is created.
func TestFormBodyBounds(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("x", rest.MaxBody+1)
	mib := strings.Repeat("x", 1<<20)
	multi := func(name string, n int, value string) func() (string, io.Reader) {
		return func() (string, io.Reader) {
			pr, pw := io.Pipe()
			w := multipart.NewWriter(pw)
			go func() {
				w.WriteField("name", name)
				for i := 0; i < n; i++ {
					if err := w.WriteField("description", value); err != nil {
						return // the server stopped reading
					}
				}
				pw.CloseWithError(w.Close())
			}()
			return w.FormDataContentType(), pr
		}
	}
	for _, tc := range []struct {
		name string
		body func() (string, io.Reader)
		want int
	}{
		// Was cut at 8 MiB and stored (201).
		{"urlencoded over 8 MiB", func() (string, io.Reader) {
			return "application/x-www-form-urlencoded", strings.NewReader("name=a&description=" + big)
		}, 413},
		{"urlencoded with 1,001 fields", func() (string, io.Reader) {
			return "application/x-www-form-urlencoded", strings.NewReader("name=b" + strings.Repeat("&description=d", 1000))
		}, 400},
		// Each part was bounded, their sum was not.
		{"multipart fields over 8 MiB together", multi("c", 9, mib), 413},
		{"multipart with 1,001 fields", multi("d", 1000, "d"), 400},
		{"multipart at the bounds", multi("e", rest.MaxFields-1, "d"), 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.Count("repositories")
			ct, body := tc.body()
			code, m, _ := e.Do("POST", "/pulp/api/v3/repositories/file/file/", ct, body)
			if code != tc.want {
				b, _ := json.Marshal(m)
				t.Fatalf("status %d, want %d: %.300s", code, tc.want, b)
			}
			if created := e.Count("repositories") - before; created != 0 && code != 201 {
				t.Errorf("%d repositories created", created)
			}
		})
	}
}
