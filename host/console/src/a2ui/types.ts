// The normalized A2UI document the renderer draws (facts §9.1). The server
// (host/a2ui) has already refused invalid documents; normalization here is
// the second line: it clamps, sanitizes and dedupes so that nothing a tool
// sends can break the page.

/** Render limits: Palyra's DEFAULT_RENDER_INPUT_LIMITS and per-prop caps. */
export const LIMITS = {
  surface: 128,
  components: 128,
  componentId: 64,
  string: 512,
  markdown: 12000,
  listItems: 256,
  tableColumns: 16,
  tableRows: 256,
  formFields: 32,
  submitLabel: 48,
  fieldId: 48,
  fieldLabel: 64,
  fieldHint: 128,
  placeholder: 96,
  selectOptions: 64,
  optionLabel: 64,
  optionValue: 64,
  chartPoints: 64,
  chartValue: 1_000_000,
  numberRange: 1_000_000,
  minStep: 1e-6,
  maxStep: 1e5,
} as const;

export type Tone = 'normal' | 'muted' | 'success' | 'critical';
export type FieldType = 'text' | 'email' | 'number' | 'select' | 'checkbox';
export type ChartKind = 'bar' | 'line' | 'pie';

export interface SelectOption {
  label: string;
  value: string;
}

export interface FormField {
  id: string;
  label: string;
  type: FieldType;
  hint: string;
  required: boolean;
  /** string for text, email and select; number for number; boolean for checkbox. */
  default: string | number | boolean;
  placeholder: string;
  min: number;
  max: number;
  step: number;
  options: SelectOption[];
}

export interface ChartPoint {
  label: string;
  value: number;
}

export type Component =
  | { id: string; type: 'text'; props: { value: string; tone: Tone } }
  | { id: string; type: 'markdown'; props: { value: string } }
  | { id: string; type: 'list'; props: { ordered: boolean; items: string[] } }
  | { id: string; type: 'table'; props: { columns: string[]; rows: string[][] } }
  | { id: string; type: 'form'; props: { title: string; submitLabel: string; fields: FormField[] } }
  | { id: string; type: 'chart'; props: { title: string; kind: ChartKind; series: ChartPoint[] } }
  | { id: string; type: 'unknown'; props: { originalType: string } };

export interface Document {
  v: 1;
  surface: string;
  components: Component[];
}

/** A form submit: {componentId, values}. */
export interface Submit {
  componentId: string;
  values: Record<string, string | number | boolean>;
}
