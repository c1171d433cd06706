// Package a2ui is the supervisor's validator of A2UI documents: the
// agent-to-user UI a skill's tool returns for the web console to render, in
// Palyra's shape {"v":1,"surface":...,"components":[...]}, the
// JSON-Patch updates {"v":1,"ops":[...]} that change one, and the form
// submits {"componentId":...,"values":{...}} that come back from the
// console.
//
// # Its part in the whole
//
// A tool's output is produced by guest code, so it is untrusted. The
// daemon asks IsDocument whether an output is meant as a document and, if
// so, runs Validate on it before anything reaches the console; a failed
// document never leaves the supervisor. It applies a tool's patches with
// Apply, which refuses a patch whose result is not a valid document. When
// the console submits a form (Palyra leaves this loop open: its chat
// renders forms without a submit handler), the daemon reads the
// submit with ParseSubmit and checks it against the document it served
// with Document.ValidateSubmit, and only the normalized values go back to
// the tool.
//
//	if a2ui.IsDocument(out) {
//		doc, err := a2ui.Validate(out)
//		if err != nil {
//			return fmt.Errorf("tool %s: %w", tool, err) // errcode.Of(err) == "a2ui_invalid", ...
//		}
//		// hand doc (or out) to the console
//	}
//	...
//	s, err := a2ui.ParseSubmit(body)
//	values, err := doc.ValidateSubmit(s)
//
// # Stricter than Palyra, and why
//
// Palyra's web client normalizes: it clamps long strings, cuts long lists,
// sanitizes ids, renames duplicates, drops unknown components and turns an
// unknown field type into text; its Rust validator checks only v, surface,
// a non-empty components list and the experimental governance. A
// document that needs any of that here is refused, with an *Error that
// names the JSON Pointer of the offending value and wraps a sentinel with
// a stable code, e.g.
//
//	a2ui: /components/3/props/fields/2/type: unknown field type "date" (want text, email, number, select, checkbox)
//
// Refusing is the right default on the trusted side: silent repair hides a
// broken or hostile skill from its author and operator, and what the
// console shows would not be what the tool said. So: unknown top-level
// keys (but experimental), component keys and props are refused; every
// prop has its JSON type; every limit of the renderer is an error that
// names the limit and the size seen; ids must already be clean and unique;
// duplicate JSON object keys, invalid UTF-8 and numbers beyond float64 are
// refused because a JavaScript client would read them differently. On top
// of the renderer's limits the package caps the document at
// MaxDocumentBytes (the envelope schema's max_payload_bytes), patches and
// submits likewise, and the nesting of all JSON at MaxJSONDepth and of list
// items and table cells at MaxValueDepth, so no input can make the
// supervisor recurse or allocate without bound.
//
// # Where sdk/go/a2ui and Palyra differ, the SDK wins
//
// Every document the guest SDK (sdk/go/a2ui) can build validates here,
// except one nested deeper than MaxValueDepth or larger than
// MaxDocumentBytes. Where Palyra's renderer does otherwise, this package
// follows the SDK:
//   - components must not be empty (as Palyra's Rust validator; the web
//     accepts []). Apply does not validate the document it starts from, so
//     a session may still start from {"v":1,"surface":"s","components":[]};
//   - chart kind may be bar, line or pie (Palyra draws bars only); points
//     have a label and a value;
//   - a table needs at least one column (Palyra defaults to ["Value"]), and
//     a row may be shorter than the columns but not longer (Palyra pads and
//     cuts);
//   - select option values and field ids follow the id rule
//     [A-Za-z0-9:_-] (Palyra sanitizes them); option values are unique;
//   - a form title and chart title are capped at MaxString;
//   - a number field's default must be in [min, max] (Palyra clamps it);
//     it need not be on the step grid;
//   - a patch has at most MaxPatchOps (256) ops, the web budget and the
//     SDK's limit, where the envelope schema allows 512.
//
// The canonical form MarshalJSON writes is the SDK's. Inputs may also use
// Palyra's aliases "markdown" (for a markdown value), "submitLabel" and
// camelCase governance keys, but not an alias and its key together.
// Props other than the table's columns, a select's options, option and
// point members, and a field's id and type may be absent and then mean
// Palyra's defaults (number min 0, max 100, step 1; tone normal; and so
// on). Patch paths are measured in UTF-16 code units like every other
// length (the SDK counts bytes, which is never less, so its patches pass).
//
// # Submits
//
// A submit's values are checked by field type (see ValidateSubmit). A
// required checkbox must be present but may be false: Palyra does not give
// the required flag to checkboxes, so the console cannot enforce "must be
// checked"; a tool that needs consent checks for true itself. A select
// the submit omits takes the default its field declares (the choice the
// form showed), before the required check; other omitted fields stay
// absent.
//
// The package has no state and starts no goroutines; its functions are safe
// for concurrent use.
package a2ui
