import { describe, expect, it } from 'vitest';
import { reachText, reasonsText } from './Approvals';

describe('approvals', () => {
  it('says why a call needs approval', () => {
    expect(
      reasonsText([
        { kind: 'manifest', detail: 'requires_approval' },
        { kind: 'profile', detail: 'http' },
      ]),
    ).toBe('manifest: requires_approval, profile: http');
    expect(reasonsText(null)).toBe('—');
  });
  it('lists what the skill may reach, class by class, leaving out empty ones', () => {
    expect(reachText({ http_hosts: ['api.example.com'], secret_keys: [], storage_prefixes: null, channels: ['ops', 'audit'] })).toEqual([
      'HTTP: api.example.com',
      'Channels: ops, audit',
    ]);
    expect(reachText(null)).toEqual([]);
  });
});
