import { describe, expect, it } from 'vitest';
import { DEADLINE_HEADER as fromDeadline } from '../deadline/header-codec.js';
import { DEADLINE_HEADER as fromLab } from '../lab/index.js';
import { DEADLINE_HEADER } from './deadline-header.js';

describe('deadline header', () => {
  it('is named x-deadline-epoch-ms, the one name the deadline module and the lab use', () => {
    expect(DEADLINE_HEADER).toBe('x-deadline-epoch-ms');
    expect(fromDeadline).toBe(DEADLINE_HEADER);
    expect(fromLab).toBe(DEADLINE_HEADER);
  });
});
