import { collect, type InputError, type Node, type State } from './model';
import { validateSchema } from './validate';

/**
 * Turns the form's inputs into the tool input and checks it: problems
 * reading the inputs first (a number that is not one, bad JSON), then the
 * schema's rules, at most one error per JSON Pointer from each.
 */
export function checkInput(schema: unknown, node: Node, state: State): { value: unknown; errors: InputError[] } {
  const errors: InputError[] = [];
  const value = collect(node, state, '', errors) ?? {};
  const seen = new Set(errors.map((e) => e.path));
  for (const e of validateSchema(schema, value)) if (!seen.has(e.path)) errors.push(e);
  return { value, errors };
}
