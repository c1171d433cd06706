import { describe, expect, it } from 'vitest';
import type { SkillConfig } from '../api/types';
import { changedValues, configFields, initialText, parseField } from './SkillConfig';

const cfg: SkillConfig = {
  skill_id: 'acme.cfg',
  version: '1.0.0',
  schema: {
    type: 'object',
    required: ['endpoint', 'api_token'],
    properties: {
      endpoint: { type: 'string', title: 'Endpoint', description: 'Base URL' },
      api_token: { type: 'string' },
      retries: { type: 'integer', default: 3 },
      ratio: { type: 'number' },
      verbose: { type: 'boolean' },
      mode: { enum: ['fast', 'safe'] },
      tags: { type: 'array', items: { type: 'string' } },
    },
  },
  sensitive: ['api_token'],
  entries: [
    { key: 'api_token', type: 'string', required: true, sensitive: true, set: true, value: '***', declared: true },
    { key: 'endpoint', type: 'string', required: true, set: true, value: 'https://e', declared: true },
    { key: 'mode', set: false, declared: true },
    { key: 'old', set: true, value: 1, declared: false, problem: 'the config schema declares no such key' },
    { key: 'ratio', type: 'number', set: false, declared: true },
    { key: 'retries', type: 'integer', set: false, default: 3, declared: true },
    { key: 'tags', type: 'array', set: true, value: ['a'], declared: true },
    { key: 'verbose', type: 'boolean', set: false, declared: true },
  ],
  missing: [],
};

describe('config form', () => {
  it('builds one field per declared key, by the kind of its schema', () => {
    const kinds = Object.fromEntries(configFields(cfg).map((f) => [f.entry.key, f.kind]));
    expect(kinds).toEqual({
      api_token: 'secret',
      endpoint: 'string',
      mode: 'enum',
      ratio: 'number',
      retries: 'integer',
      tags: 'json',
      verbose: 'boolean',
    });
    const endpoint = configFields(cfg).find((f) => f.entry.key === 'endpoint')!;
    expect(endpoint.title).toBe('Endpoint');
    expect(endpoint.description).toBe('Base URL');
  });

  it('never puts a sensitive value in a field', () => {
    const secret = configFields(cfg).find((f) => f.kind === 'secret')!;
    expect(initialText(secret)).toBe('');
    expect(parseField(secret, '')).toEqual({ skip: true });
  });

  it('types the values and sends only what changed', () => {
    const fields = configFields(cfg);
    const texts: Record<string, string> = Object.fromEntries(fields.map((f) => [f.entry.key, initialText(f)]));
    expect(changedValues(fields, texts)).toEqual({ values: {}, errors: [] });
    texts.retries = '5';
    texts.ratio = '0.5';
    texts.verbose = 'true';
    texts.mode = '"safe"';
    texts.api_token = 'new-token-value';
    texts.endpoint = '123';
    expect(changedValues(fields, texts)).toEqual({
      values: { retries: 5, ratio: 0.5, verbose: true, mode: 'safe', api_token: 'new-token-value', endpoint: '123' },
      errors: [],
    });
  });

  it('reports values that do not parse, naming the key', () => {
    const fields = configFields(cfg);
    const { errors } = changedValues(fields, { retries: '2.5', ratio: 'x', tags: '[', verbose: 'maybe' });
    expect(errors).toEqual(['ratio: enter a number', 'retries: enter a whole number', 'tags: not valid JSON', 'verbose: choose true or false']);
  });
});
