import { describe, expect, it } from 'vitest';
import {
  currentCriticality,
  withAmbientCriticality,
  withCriticality,
  withRequestCriticality,
} from './criticality-context.js';

describe('ambient criticality', () => {
  it('is absent outside any scope and adds nothing to a call', () => {
    expect(currentCriticality()).toBeUndefined();
    expect(withAmbientCriticality(null)).toBeNull();
    expect(withAmbientCriticality(['accept', 'application/json'])).toEqual(['accept', 'application/json']);
  });

  it("adds the ambient criticality to a call's headers", () => {
    withCriticality('sheddable', () => {
      expect(currentCriticality()).toBe('sheddable');
      expect(withAmbientCriticality(null)).toEqual(['x-criticality', 'sheddable']);
      expect(withAmbientCriticality(['accept', '*/*'])).toEqual([
        'accept',
        '*/*',
        'x-criticality',
        'sheddable',
      ]);
    });
  });

  it('never overrides a criticality the call sets itself, whatever its case', () => {
    withCriticality('critical', () => {
      expect(withAmbientCriticality(['X-Criticality', 'sheddable'])).toEqual(['X-Criticality', 'sheddable']);
    });
  });

  it('does not send default, which is what no header means', () => {
    withCriticality('default', () => {
      expect(withAmbientCriticality(null)).toBeNull();
    });
  });

  it('lets a nested scope replace the outer value, and survives awaits', async () => {
    await withCriticality('critical', async () => {
      await Promise.resolve();
      expect(currentCriticality()).toBe('critical');
      withCriticality('sheddable', () => expect(currentCriticality()).toBe('sheddable'));
      expect(currentCriticality()).toBe('critical');
    });
  });

  it('enters a request scope only for a criticality that says something', () => {
    withCriticality('critical', () => {
      withRequestCriticality('default', () => expect(currentCriticality()).toBe('critical'));
      withRequestCriticality('sheddable', () => expect(currentCriticality()).toBe('sheddable'));
    });
  });
});
