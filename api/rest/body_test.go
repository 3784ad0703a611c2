package rest

import (
	"fmt"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// parts is a multipart body of n parts, each a field (or a file when file is set) of
// size bytes, made as it is read, so a test can send more than it holds.
type parts struct {
	n, size int
	file    bool
	cur     strings.Reader
	made    int
	read    int // bytes read by the server
}

const boundary = "pithboundary"

func (p *parts) Read(b []byte) (int, error) {
	for p.cur.Len() == 0 {
		switch {
		case p.made < p.n:
			disp := `form-data; name="description"`
			if p.file {
				disp += `; filename="f.txt"`
			}
			p.cur.Reset(fmt.Sprintf("--%s\r\nContent-Disposition: %s\r\n\r\n%s\r\n", boundary, disp, strings.Repeat("x", p.size)))
			p.made++
		case p.made == p.n:
			p.cur.Reset("--" + boundary + "--\r\n")
			p.made++
		default:
			return 0, io.EOF
		}
	}
	n, err := p.cur.Read(b)
	p.read += n
	return n, err
}

// The fields of a multipart body share one budget, and a body has at most MaxFields
// parts: beyond either the reader stops, having held no more than the budget.
func TestMultipartBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		body *parts
		want int
		read int // at most this many bytes read before the answer
	}{
		// Each part was bounded (8 MiB), their sum was not: all 64 MiB were held.
		{"64 MiB of 64 KiB fields", &parts{n: 1024, size: 64 << 10}, 413, MaxBody + 128<<10},
		{"100,000 empty fields", &parts{n: 100_000}, 400, (MaxFields + 1) * 100},
		{"files share no budget with fields", &parts{n: 16, size: 1 << 20, file: true}, 0, 17 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/pulp/api/v3/x/", tc.body)
			r.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
			_, err := readBody(r, nil, func(_, _ string, body io.Reader) error {
				_, err := io.Copy(io.Discard, body)
				return err
			})
			switch {
			case err == nil && tc.want != 0:
				t.Fatalf("no error, want status %d", tc.want)
			case err != nil:
				if code, m := answer(err); code != tc.want {
					t.Fatalf("status %d %v, want %d", code, m, tc.want)
				}
			}
			if tc.body.read > tc.read {
				t.Errorf("read %d bytes, want at most %d", tc.body.read, tc.read)
			}
		})
	}
}

// A form's numbers are spelled again as JSON: Go parses spellings JSON has no room for
// ("00", "+7", "0x1p-2"), and NaN or Inf is a 400 naming the field.
func TestFormNumbers(t *testing.T) {
	kinds := map[string]reflect.Type{"count": reflect.TypeOf(int64(0)), "ratio": reflect.TypeOf(0.0)}
	for _, c := range []struct{ name, in, want string }{
		{"count", "007", "7"}, {"count", "+7", "7"}, {"count", "-0", "0"}, {"count", "", "null"},
		{"ratio", "00", "0"}, {"ratio", "+1", "1"}, {"ratio", "0x1p-2", "0.25"}, {"ratio", "1e3", "1000"},
		{"ratio", "NaN", ""}, {"ratio", "Inf", ""}, {"count", "0x10", ""}, {"count", "1.5", ""},
	} {
		v, err := formValue(c.name, []string{c.in}, kinds)
		if c.want == "" {
			if err == nil || !strings.Contains(err.Error(), c.name) {
				t.Errorf("%s=%q: got %s, %v; want an error naming the field", c.name, c.in, v, err)
			}
			continue
		}
		if err != nil || string(v) != c.want {
			t.Errorf("%s=%q: got %s, %v; want %s", c.name, c.in, v, err, c.want)
		}
	}
}
