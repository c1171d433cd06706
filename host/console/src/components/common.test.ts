import { describe, expect, it } from 'vitest';
import { humanBytes } from './common';

describe('humanBytes', () => {
  it.each([
    [0, '0 bytes'],
    [1, '1 byte'],
    [1023, '1023 bytes'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [1067338, '1.0 MiB'],
    [64 * 1024 * 1024, '64 MiB'],
    [5.5 * 1024 * 1024 * 1024, '5.5 GiB'],
    [-1, '—'],
    [Number.NaN, '—'],
    [undefined, '—'],
  ])('humanBytes(%s) = %s', (n, want) => {
    expect(humanBytes(n)).toBe(want);
  });
});
