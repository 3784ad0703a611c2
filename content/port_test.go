package content

import (
	"testing"
)

// FuzzAppendJSON checks the direct path of AppendJSON against the encoder it stands
// in for: the same bytes for every string, in a list as an rpm package's cells hold it.
func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{"", "kangaroo-0.3-1.noarch.rpm", `a"b`, `a\b`, "<&>", "Tom <tom@example.com>", "é", "a\nb", "\x7f", "\u2028", "\xff"} {
		f.Add(s, int64(1700000000), true)
	}
	f.Fuzz(func(t *testing.T, s string, n int64, flag bool) {
		v := [][]any{{s, n, nil, flag}, {}, nil}
		got, err := AppendJSON([]byte("x"), v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := encodeJSON([]byte("x"), v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("AppendJSON(%#v) = %s, the encoder writes %s", v, got, want)
		}
	})
}

func TestCellJSON(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want any
	}{
		{JSON{V: [][]any{}}, nil},
		{JSON{V: nil}, nil},
		{JSON{V: map[string]any{}}, nil},
		{JSON{V: ""}, nil},
		{JSON{V: [][]any{{"Tom <tom@example.com>", int64(1), "- fix & ship"}}}, `[["Tom <tom@example.com>",1,"- fix & ship"]]`},
		{JSON{V: map[string]any{"b": 1, "a": []any{"x", false}}}, `{"a":["x",false],"b":1}`},
	} {
		got, err := Cell(tc.v)
		if err != nil || got != tc.want {
			t.Errorf("Cell(%#v) = %#v, %v; want %#v", tc.v, got, err, tc.want)
		}
	}
}
