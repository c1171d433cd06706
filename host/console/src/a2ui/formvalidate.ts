import type { FormField } from './types';

// The checks of host/a2ui's Document.ValidateSubmit, run before a form is
// sent so the operator sees the problem next to the field.

export const STEP_TOLERANCE = 1e-9;

/** A bare address as net/mail accepts it without a name or brackets. */
export function isEmail(s: string): boolean {
  return /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/.test(s);
}

/** The raw input state of a form: strings for text-like inputs, bools for checkboxes. */
export type FormInputs = Record<string, string | boolean>;

export function initialInputs(fields: FormField[]): FormInputs {
  const out: FormInputs = {};
  for (const f of fields) out[f.id] = f.type === 'checkbox' ? f.default === true : String(f.default ?? '');
  return out;
}

/**
 * Builds the submit values from the inputs and checks them. An optional
 * number left empty is not sent; every other field is.
 */
export function collectSubmit(
  fields: FormField[],
  inputs: FormInputs,
): { values: Record<string, string | number | boolean>; errors: Record<string, string> } {
  const values: Record<string, string | number | boolean> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const v = inputs[f.id];
    switch (f.type) {
      case 'checkbox':
        values[f.id] = v === true;
        break;
      case 'number': {
        const s = typeof v === 'string' ? v.trim() : '';
        if (s === '') {
          if (f.required) errors[f.id] = 'Required.';
          break;
        }
        const n = Number(s);
        if (!Number.isFinite(n)) {
          errors[f.id] = 'Enter a number.';
        } else if (n < f.min || n > f.max) {
          errors[f.id] = `Must be between ${f.min} and ${f.max}.`;
        } else if (Math.abs(n - (f.min + Math.round((n - f.min) / f.step) * f.step)) > STEP_TOLERANCE) {
          errors[f.id] = `Must be ${f.min} plus a multiple of ${f.step}.`;
        } else {
          values[f.id] = n;
        }
        break;
      }
      default: {
        const s = typeof v === 'string' ? v : '';
        if (s.length > 512) errors[f.id] = `At most 512 characters (${s.length} given).`;
        else if (f.required && s.trim() === '') errors[f.id] = 'Required.';
        else if (f.type === 'email' && s !== '' && !isEmail(s)) errors[f.id] = 'Enter an email address like name@example.org.';
        else if (f.type === 'select' && !f.options.some((o) => o.value === s)) errors[f.id] = 'Choose one of the options.';
        else values[f.id] = s;
      }
    }
  }
  return { values, errors };
}
