import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { NaiveCaller } from '../peers/naive-caller.js';
import { epochNow } from '../waterfall/trail.js';
import { callerDownstream } from './downstream.js';

const incoming = { headers: { 'x-deadline-epoch-ms': '1800000002000' } } as unknown as IncomingMessage;

describe('the downstream of a client that knows nothing of deadlines', () => {
  it('lays out the attempts its client reported at the edge, also when the client answers with a frozen object', async () => {
    const fallback = Object.freeze({ status: 503, body: '{"error":"circuit-open-fallback"}' });
    const caller: NaiveCaller = {
      async call(_path, headers, _tag, trace) {
        expect(headers).toEqual({ 'x-deadline-epoch-ms': '1800000002000' });
        const endMs = epochNow();
        trace?.attempts.push({ kind: 'original', endMs, durationMs: 5, ok: false });
        return fallback;
      },
      close: async () => {},
    };
    const result = await callerDownstream(caller, 250, 'inventory').call('/stock', incoming, 'hedged');
    expect(result).toMatchObject({ status: 503, body: fallback.body });
    expect(result.spans?.map((s) => [s.hop, s.kind, s.durationMs, s.note])).toEqual([
      ['inventory', 'attempt', 5, '#1 original failed'],
    ]);
    const untraced = await callerDownstream(caller, 250).call('/stock', incoming, 'hedged');
    expect(untraced).toBe(fallback);
  });
});
