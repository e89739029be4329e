import { describe, expect, it } from 'vitest';
import { detectFormat } from './detect.js';

describe('detectFormat', () => {
  it.each([
    ['calls.csv', '', 'csv'],
    ['calls.tsv', '', 'csv'],
    ['h.json', '', 'json'],
    ['scrape.prom', '', 'prometheus'],
    ['h.txt', '  {"format":1}', 'json'],
    ['scrape.txt', '# HELP x_seconds x\n# TYPE x_seconds histogram\n', 'prometheus'],
    ['scrape', 'x_seconds_bucket{le="0.1"} 3\n', 'prometheus'],
    ['lat.txt', '# latencies\n12\n13\n', 'lines'],
    ['lat', '\n12.5\n', 'lines'],
    ['calls.log', 'timestamp,latency_ms\n1,2\n', 'csv'],
    ['calls.log', 'latency_ms\n12\n', 'csv'],
  ] as const)('%s starting %j is %s', (path, head, format) => {
    expect(detectFormat(path, head)).toBe(format);
  });

  it('gives up on content it cannot recognise', () => {
    expect(detectFormat('x.bin', '')).toBeUndefined();
    expect(detectFormat('x.bin', '!!!')).toBeUndefined();
  });
});
