package a2ui

// Version is the value of "v" in documents and patches.
const Version = 1

// Limits on the size of untrusted input, the package's own (Palyra has
// none but the envelope schema's max_payload_bytes).
const (
	// MaxDocumentBytes caps a document: the envelope schema's
	// limits.max_payload_bytes maximum.
	MaxDocumentBytes = 262144
	// MaxPatchBytes caps a patch, as MaxDocumentBytes a document.
	MaxPatchBytes = 262144
	// MaxSubmitBytes caps a form submit.
	MaxSubmitBytes = 65536
	// MaxJSONDepth caps the nesting of arrays and objects in any input.
	MaxJSONDepth = 64
	// MaxValueDepth caps the nesting of a free-form value: a list item or a
	// table cell.
	MaxValueDepth = 32
)

// Render limits: Palyra's DEFAULT_RENDER_INPUT_LIMITS and the per-prop caps
// of its web normalizer (normalizeA2uiDocument), the same as sdk/go/a2ui's.
// Lengths of strings
// are counted in UTF-16 code units, as a JavaScript client and the SDK
// count them.
const (
	MaxSurface       = 128       // surface length
	MaxComponents    = 128       // components in a document
	MaxComponentID   = 64        // component id length
	MaxString        = 512       // any string without a cap of its own
	MaxMarkdown      = 12000     // markdown value length
	MaxListItems     = 256       // list items
	MaxTableColumns  = 16        // table columns
	MaxTableRows     = 256       // table rows
	MaxFormFields    = 32        // form fields
	MaxSubmitLabel   = 48        // form submit_label length
	MaxFieldID       = 48        // field id length
	MaxFieldLabel    = 64        // field label length
	MaxFieldHint     = 128       // field hint length
	MaxPlaceholder   = 96        // text and email placeholder length
	MaxSelectOptions = 64        // select options
	MaxOptionLabel   = 64        // option label length
	MaxOptionValue   = 64        // option value length
	MaxChartPoints   = 64        // chart points
	MaxChartValue    = 1_000_000 // chart values lie in [0, MaxChartValue]
	MaxNumberRange   = 1_000_000 // number fields: min and max lie in ±MaxNumberRange
	MinNumberStep    = 1e-6      // number fields: smallest step
	MaxNumberStep    = 1e5       // number fields: largest step
)

// Limits of the experimental governance, as Palyra's normalizer sets them.
const (
	MaxTrackID         = 64  // track_id length
	MaxFeatureFlag     = 96  // feature_flag length
	MaxSupportSummary  = 240 // support_summary length
	MaxGovernanceItems = 6   // entries of security_review and of exit_criteria
	MaxGovernanceItem  = 160 // length of one such entry
)

// Patch limits: Palyra's web budget (DEFAULT_PATCH_BUDGET's maxOpsPerPatch
// and maxPathLength).
const (
	MaxPatchOps  = 256 // ops in a patch
	MaxPatchPath = 512 // path length
)

// StepTolerance is how far a submitted number may lie from the step grid
// min + k·step of its field and still count as on it.
const StepTolerance = 1e-9

// Document is a validated A2UI document. Validate returns it; its values
// are plain data the caller owns. MarshalJSON writes it in canonical form.
type Document struct {
	Surface    string
	Components []Component
	// Experimental is the governance of an experimental surface, or nil.
	Experimental *Experimental
}

// Component finds the component with the given id.
func (d *Document) Component(id string) (*Component, bool) {
	for i := range d.Components {
		if d.Components[i].ID == id {
			return &d.Components[i], true
		}
	}
	return nil, false
}

// Component is one element of a document.
type Component struct {
	// ID is unique in the document and matches [A-Za-z0-9:_-]{1,64}.
	ID   string
	Type Type
	// Props is *TextProps, *MarkdownProps, *ListProps, *TableProps,
	// *FormProps or *ChartProps, as Type says.
	Props Props
}

// Type is a component type.
type Type string

// The component types.
const (
	TypeText     Type = "text"
	TypeMarkdown Type = "markdown"
	TypeList     Type = "list"
	TypeTable    Type = "table"
	TypeForm     Type = "form"
	TypeChart    Type = "chart"
)

// Props are the typed properties of a component. The set of
// implementations is closed: the pointer types of this package.
type Props interface {
	componentType() Type
}

// Tone colours a text component.
type Tone string

// The tones. An absent tone is "" and renders as ToneNormal.
const (
	ToneNormal   Tone = "normal"
	ToneMuted    Tone = "muted"
	ToneSuccess  Tone = "success"
	ToneCritical Tone = "critical"
)

// TextProps are the props of a text component.
type TextProps struct {
	Value string `json:"value"`
	Tone  Tone   `json:"tone,omitempty"`
}

// MarkdownProps are the props of a markdown component. The input key is
// "value" or its alias "markdown".
type MarkdownProps struct {
	Value string `json:"value"`
}

// ListProps are the props of a list component. Items are any JSON values
// (numbers as float64); the renderer shows non-strings JSON-encoded.
type ListProps struct {
	Ordered bool  `json:"ordered"`
	Items   []any `json:"items"`
}

// TableProps are the props of a table component. The first column is the
// row header; a row may be shorter than Columns, never longer.
type TableProps struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// FormProps are the props of a form component. The input key of
// SubmitLabel is "submit_label" or its alias "submitLabel".
type FormProps struct {
	// Title is "" when absent; the renderer shows "Form".
	Title string `json:"title,omitempty"`
	// SubmitLabel is "" when absent; the renderer shows "Submit".
	SubmitLabel string  `json:"submit_label,omitempty"`
	Fields      []Field `json:"fields"`
}

// Field finds the field with the given id.
func (p *FormProps) Field(id string) (*Field, bool) {
	for i := range p.Fields {
		if p.Fields[i].ID == id {
			return &p.Fields[i], true
		}
	}
	return nil, false
}

// FieldType is the type of a form field.
type FieldType string

// The field types.
const (
	FieldText     FieldType = "text"
	FieldEmail    FieldType = "email"
	FieldNumber   FieldType = "number"
	FieldSelect   FieldType = "select"
	FieldCheckbox FieldType = "checkbox"
)

// Field is one form field. Only the props of its Type are set: Placeholder
// for text and email, Min, Max and Step for number (Palyra's defaults 0,
// 100 and 1 when absent), Options for select. Default is nil or suits the
// type: a string for text, email and select (one of the option values), a
// float64 in [Min, Max] for number, a bool for checkbox.
type Field struct {
	ID          string
	Label       string
	Type        FieldType
	Hint        string
	Required    bool
	Default     any
	Placeholder string
	Min         float64
	Max         float64
	Step        float64
	Options     []Option
}

// Option is one choice of a select field.
type Option struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// ChartKind is the kind of a chart: the kinds sdk/go/a2ui can build.
// Palyra's web renderer draws every chart as a bar chart.
type ChartKind string

// The chart kinds. An absent kind is "" and renders as a bar chart.
const (
	ChartBar  ChartKind = "bar"
	ChartLine ChartKind = "line"
	ChartPie  ChartKind = "pie"
)

// ChartProps are the props of a chart component: one series of labelled
// values in [0, MaxChartValue].
type ChartProps struct {
	// Title is "" when absent; the renderer shows "Chart".
	Title  string    `json:"title,omitempty"`
	Kind   ChartKind `json:"kind,omitempty"`
	Series []Point   `json:"series"`
}

// Point is one value of a chart's series.
type Point struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

func (*TextProps) componentType() Type     { return TypeText }
func (*MarkdownProps) componentType() Type { return TypeMarkdown }
func (*ListProps) componentType() Type     { return TypeList }
func (*TableProps) componentType() Type    { return TypeTable }
func (*FormProps) componentType() Type     { return TypeForm }
func (*ChartProps) componentType() Type    { return TypeChart }

// Experimental is the governance of an experimental surface. The
// input keys are snake_case or camelCase; absent optional values get
// Palyra's defaults.
type Experimental struct {
	TrackID        string `json:"track_id"`
	FeatureFlag    string `json:"feature_flag"`
	SupportSummary string `json:"support_summary"`
	// RolloutStage is disabled, dark_launch (the default),
	// operator_preview or limited_preview.
	RolloutStage string `json:"rollout_stage"`
	// AmbientMode is disabled (the default) or push_to_talk, which needs
	// ConsentRequired.
	AmbientMode     string   `json:"ambient_mode"`
	ConsentRequired bool     `json:"consent_required"`
	SecurityReview  []string `json:"security_review"`
	ExitCriteria    []string `json:"exit_criteria"`
}
