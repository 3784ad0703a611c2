// Package updateinfo reads and writes a yum repository's updateinfo.xml: the advisories
// (errata) Pulp calls UpdateRecords. Parse streams a document, handing each <update> to
// a callback as an Update; Writer and MarshalUpdate turn Updates back into a document
// that createrepo_c, dnf and yum read. Field names and JSON names follow Pulp's
// rpm.UpdateRecordResponse, so the API renders an Update as it is.
//
// Invariants:
//   - Parse reads the way createrepo_c does: attributes and text as given (text is not
//     trimmed, text inside child elements counts), an empty text element is an absent
//     one, a present <reboot_suggested> means true whatever its text, unknown elements
//     are skipped, the last of repeated elements wins. A package without an epoch gets
//     "0", as Pulp stores it.
//   - Dates are kept as the file spells them, but each must read as one of the forms
//     ParseDate knows; anything else is an error, not a silently empty date.
//   - Every problem is an *Error naming the file, the line and, inside an update, its id;
//     an update without an id, a package without a name, two updates with one id and a
//     text or attribute longer than 64 MiB are errors. Nothing panics on bad input.
//   - MarshalUpdate is byte-stable (same Update, same bytes) and Parse of its output gives
//     back an equal Update, so a stored fragment can be concatenated into a document.
//   - Sum is a digest over every field: two advisories with one id and different content
//     have different sums. It is not Pulp's digest (Pulp hashes createrepo_c's XML, which
//     its API does not expose).
package updateinfo
