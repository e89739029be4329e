import { describe, expect, it } from 'vitest';
import { instanceOutcomeOfStatus } from './instance-outcome.js';

describe('instanceOutcomeOfStatus', () => {
  it.each([
    [200, 'success'],
    [204, 'success'],
    [304, 'success'],
    [400, 'success'],
    [404, 'success'],
    [408, 'success'],
    [429, 'neutral'],
    [500, 'error'],
    [501, 'error'],
    [502, 'gateway'],
    [503, 'gateway'],
    [504, 'gateway'],
    [505, 'error'],
  ] as const)('treats status %i as %s', (status, outcome) => {
    expect(instanceOutcomeOfStatus(status)).toBe(outcome);
  });
});
