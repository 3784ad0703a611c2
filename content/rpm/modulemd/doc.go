// Package modulemd reads and writes a repository's modular metadata (modules.yaml):
// modulemd v2 documents, modulemd-defaults v1 and modulemd-obsoletes v1, into the
// models Pulp's rpm plugin exposes (Modulemd, ModulemdDefaults, ModulemdObsolete).
//
// Invariants:
//   - A document is split on its "---" and "..." marker lines before any YAML is
//     decoded, so each value keeps its document's text byte for byte. The Snippet is
//     that text framed as "---\n" + text + "\n...", the form Pulp stores (and hashes
//     for its digest), and every other field is decoded from the Snippet itself: a
//     stored snippet and its fields never disagree.
//   - Snippet is tagged json:"-" (Pulp accepts it on create, never renders it); the
//     caller stores it beside the rendered fields.
//   - Scalars are read as their text, as libmodulemd reads them: stream 2.10 stays
//     "2.10", never the float 2.1. Versions are uint64, rendered as strings like Pulp.
//   - A document over MaxDocumentSize, a YAML alias (libmodulemd rejects them, and
//     they are how alias bombs are built) or a duplicate key is refused.
//   - Documents of other types (modulemd-translations, modulemd-packager, ...) are
//     skipped and listed by Decoder.Skipped, as Pulp logs and skips them; modulemd
//     version 1 is refused, as Pulp's schema refuses it.
//   - Errors are *Error values naming the file, the line and the field.
package modulemd
