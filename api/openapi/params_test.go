package openapi

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestParamHelpers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  []Param
		want string
	}{
		{"string exact", StringFilter("name"),
			`[{"in":"query","name":"name","schema":{"type":"string"},"description":"Filter results where name matches value"}]`},
		{"string in", StringFilter("name", "in"),
			`[{"in":"query","name":"name__in","schema":{"type":"array","items":{"type":"string"}},"description":"Filter results where name is in a comma-separated list of values","explode":false,"style":"form"}]`},
		{"int range and isnull", IntFilter("number", "range", "isnull"),
			`[{"in":"query","name":"number__range","schema":{"type":"array","items":{"type":"integer"}},"description":"Filter results where number is between two comma separated values","explode":false,"style":"form"},` +
				`{"in":"query","name":"number__isnull","schema":{"type":"boolean"},"description":"Filter results where number has a null value"}]`},
		{"date-time gt", DateTimeFilter("pulp_created", "gt"),
			`[{"in":"query","name":"pulp_created__gt","schema":{"type":"string","format":"date-time"},"description":"Filter results where pulp_created is greater than value"}]`},
		{"bool", []Param{BoolFilter("hidden")},
			`[{"in":"query","name":"hidden","schema":{"type":"boolean"},"description":"Filter results where hidden matches value"}]`},
		{"choice", []Param{ChoiceFilter("state", "waiting", "failed")},
			"[{\"in\":\"query\",\"name\":\"state\",\"schema\":{\"type\":\"string\",\"enum\":[\"failed\",\"waiting\"]},\"description\":\"Filter results where state matches value\\n\\n* `waiting` - Waiting\\n* `failed` - Failed\"}]"},
		{"uuid", []Param{UUIDFilter("pulp_id__in")},
			`[{"in":"query","name":"pulp_id__in","schema":{"type":"array","items":{"type":"string","format":"uuid"}},"description":"Multiple values may be separated by commas.","explode":false,"style":"form"}]`},
		{"ordering", []Param{Ordering("name")},
			"[{\"in\":\"query\",\"name\":\"ordering\",\"schema\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"-name\",\"name\"]}},\"description\":\"Ordering\\n\\n* `name` - Name\\n* `-name` - Name (descending)\",\"explode\":false,\"style\":\"form\"}]"},
		{"label select and q", []Param{LabelSelect(), Q()},
			`[{"in":"query","name":"pulp_label_select","schema":{"type":"string"},"description":"Filter labels by search string"},` +
				`{"in":"query","name":"q","schema":{"type":"string"},"description":"Filter results by using NOT, AND and OR operations on other filters"}]`},
		{"content range", []Param{ContentRange()},
			`[{"in":"header","name":"Content-Range","schema":{"type":"string"},"description":"The Content-Range header specifies the location of the file chunk within the file.","required":true}]`},
		{"href", []Param{HrefFilter("remote", "")},
			`[{"in":"query","name":"remote","schema":{"type":"string"}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tt.got)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestListParams(t *testing.T) {
	t.Parallel()
	var names []string
	for _, p := range ListParams() {
		names = append(names, p.In+":"+p.Name)
	}
	want := "[header:X-Task-Diagnostics query:limit query:offset query:fields query:exclude_fields]"
	if got := fmt.Sprint(names); got != want {
		t.Errorf("ListParams = %s, want %s", got, want)
	}
}
