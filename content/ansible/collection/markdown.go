package collection

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// md renders Markdown as galaxy-importer's markdown.markdown(extensions=["extra"])
// does in the main (tables, footnotes, definition lists, fenced code), but safely:
// goldmark without html.WithUnsafe drops raw HTML and neutralizes javascript:,
// vbscript:, file: and data: (except images) links, so nothing but goldmark's own tags
// reaches the output.
var md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Footnote, extension.DefinitionList))

// omittedHTML is goldmark's marker where it dropped raw HTML; galaxy-importer's
// sanitizer strips comments, so the marker goes too.
const omittedHTML = "<!-- raw HTML omitted -->"

// renderMarkdown renders a documentation file; the text must be UTF-8, as
// galaxy-importer decodes it.
func renderMarkdown(p string, src []byte) (string, error) {
	if !utf8.Valid(src) {
		return "", errorf(ErrFormat, p, "documentation file is not valid UTF-8")
	}
	var b bytes.Buffer
	if err := md.Convert(src, &b); err != nil {
		return "", &Error{Kind: ErrFormat, Path: p, Msg: "rendering Markdown: " + err.Error(), Err: err}
	}
	html := strings.ReplaceAll(b.String(), omittedHTML, "")
	return strings.TrimSuffix(html, "\n"), nil
}
