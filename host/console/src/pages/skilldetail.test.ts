import { describe, expect, it } from 'vitest';
import { availableActions, errorCodes } from './SkillDetail';

describe('availableActions', () => {
  it.each([
    ['an active version', { status: 'active', runtime_status: { quarantine_status: 'none' } }, ['verify', 'audit', 'quarantine', 'disable', 'remove']],
    ['a quarantined version', { status: 'quarantined', runtime_status: { quarantine_status: 'quarantined' } }, ['verify', 'audit', 'enable', 'disable', 'remove']],
    ['a disabled version', { status: 'disabled', runtime_status: { quarantine_status: 'none' } }, ['verify', 'audit', 'quarantine', 'enable', 'remove']],
    [
      'an active version under a runtime (anomaly) quarantine',
      { status: 'active', runtime_status: { quarantine_status: 'quarantined' } },
      ['verify', 'audit', 'enable', 'disable', 'remove'],
    ],
    ['a version without a runtime status', { status: 'active' }, ['verify', 'audit', 'quarantine', 'disable', 'remove']],
  ])('%s', (_, inv, want) => {
    expect(availableActions(inv)).toEqual(want);
  });

  it('never offers Enable on an active version, nor Disable on a disabled one', () => {
    expect(availableActions({ status: 'active' })).not.toContain('enable');
    expect(availableActions({ status: 'disabled' })).not.toContain('disable');
    expect(availableActions({ status: 'quarantined' })).not.toContain('quarantine');
  });
});

describe('errorCodes', () => {
  it.each([
    ['leaves out ok', { ok: 4 }, []],
    ['keeps the errors, most frequent first, ties by name', { ok: 9, timeout: 1, invalid_input: 3, fuel_exhausted: 1 }, [['invalid_input', 3], ['fuel_exhausted', 1], ['timeout', 1]]],
    ['leaves out zero counts', { timeout: 0, denied: 2 }, [['denied', 2]]],
    ['no map', undefined, []],
  ] as const)('%s', (_, byCode, want) => {
    expect(errorCodes(byCode as Record<string, number> | undefined)).toEqual(want);
  });
});
