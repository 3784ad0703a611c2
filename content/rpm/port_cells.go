package rpm

import (
	"fmt"

	"pith/content"
)

// maxCell bounds a cell an import decodes (a package's files, a module's snippet): the
// largest real ones are a few MiB.
const maxCell = 64 << 20

// cells reads the cells of one row, keeping the first error, which names the column.
type cells struct {
	row content.Row
	err error
}

func (c *cells) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// big reports (as the error) a cell larger than maxCell.
func (c *cells) big(col string) bool {
	if len(c.row[col]) > maxCell {
		c.fail(fmt.Errorf("column %s: larger than %d bytes", col, maxCell))
		return true
	}
	return false
}

// str is a text cell, "" when missing or null.
func (c *cells) str(col string) string {
	if c.big(col) {
		return ""
	}
	s, err := c.row.Str(col)
	if err != nil {
		c.fail(err)
	}
	return s
}

// need is a text cell that must be there and not be empty.
func (c *cells) need(col string) string {
	if _, ok := c.row[col]; !ok {
		c.fail(fmt.Errorf("column %s: missing", col))
		return ""
	}
	s := c.str(col)
	if s == "" {
		c.fail(fmt.Errorf("column %s: empty, and it is required", col))
	}
	return s
}

// opt is a text cell as a pointer, nil when empty.
func (c *cells) opt(col string) *string {
	if s := c.str(col); s != "" {
		return &s
	}
	return nil
}

// int is a number cell; ok is false when it is empty.
func (c *cells) int(col string) (int64, bool) {
	n, ok, err := c.row.Int(col)
	if err != nil {
		c.fail(err)
	}
	return n, ok
}

// num is a number cell, 0 when empty.
func (c *cells) num(col string) int64 {
	n, _ := c.int(col)
	return n
}

// bool is a boolean cell; ok is false when it is empty.
func (c *cells) bool(col string) (bool, bool) {
	b, ok, err := c.row.Bool(col)
	if err != nil {
		c.fail(err)
	}
	return b, ok
}

// flag is a boolean cell, false when empty.
func (c *cells) flag(col string) bool {
	b, _ := c.bool(col)
	return b
}

// json decodes a JSON cell into v, reporting whether it held a value.
func (c *cells) json(col string, v any) bool {
	if c.big(col) {
		return false
	}
	ok, err := c.row.JSON(col, v)
	if err != nil {
		c.fail(err)
	}
	return ok
}
