import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LatencyHistogram } from '../histogram.js';
import { readLatencyFile } from './read-latency-file.js';

const dir = mkdtempSync(join(tmpdir(), 'prazo-formats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** A CSV of `minutes` minutes at 1 call per 100 ms; `degraded` minutes answer in seconds with 503s. */
const minutesCsv = (minutes: number, degraded: ReadonlySet<number>): string => {
  const start = Date.parse('2026-12-02T12:00:00Z');
  const rows = ['timestamp,latency_ms,status'];
  for (let i = 0; i < minutes * 600; i++) {
    const minute = Math.floor(i / 600);
    const bad = degraded.has(minute);
    const latency = bad ? 2000 + (i % 50) * 100 : 20 + (i % 100);
    rows.push(`${new Date(start + i * 100).toISOString()},${latency},${bad && i % 3 === 0 ? 503 : 200}`);
  }
  return `${rows.join('\n')}\n`;
};

describe('readLatencyFile', () => {
  it('detects a CSV, slices it by minute and excludes the degraded minute', async () => {
    const report = await readLatencyFile(file('calls.csv', minutesCsv(6, new Set([5]))));
    expect(report.format).toBe('csv');
    expect(report.timed).toBe(true);
    expect(report.sliceMs).toBe(60_000);
    expect(report.slices).toHaveLength(6);
    expect(report.selection.included).toHaveLength(5);
    expect(report.selection.excluded).toHaveLength(1);
    expect(report.selection.excluded[0]!.startMs).toBe(Date.parse('2026-12-02T12:05:00Z'));
    expect(report.selection.histogram.count).toBe(3000);
    expect(report.selection.histogram.percentile(99)).toBeLessThan(125);
  });

  it('honours the slice length and keeps only the most recent window', async () => {
    const path = file('calls-window.csv', minutesCsv(4, new Set()));
    expect((await readLatencyFile(path, { sliceMs: 30_000 })).slices).toHaveLength(8);
    expect((await readLatencyFile(path, { windowMs: 120_000 })).slices).toHaveLength(2);
  });

  it('reads a lines file, a histogram JSON file and a Prometheus scrape', async () => {
    const lines = await readLatencyFile(
      file('lat.txt', `${Array.from({ length: 100 }, (_, i) => i + 1).join('\n')}\n`),
    );
    expect(lines).toMatchObject({ format: 'lines', timed: false, sliceMs: null });
    expect(lines.selection.histogram.count).toBe(100);

    const histogram = new LatencyHistogram();
    for (let i = 1; i <= 100; i++) histogram.record(i);
    const json = await readLatencyFile(file('h.json', JSON.stringify(histogram.toJSON())));
    expect(json.format).toBe('json');
    expect(json.selection.histogram.count).toBe(100);

    const prom = await readLatencyFile(
      file(
        'scrape.txt',
        '# TYPE rpc_seconds histogram\nrpc_seconds_bucket{le="0.1"} 90\nrpc_seconds_bucket{le="+Inf"} 100\n',
      ),
    );
    expect(prom.format).toBe('prometheus');
    expect(prom.selection.histogram.count).toBe(100);
  });

  it('takes the format from the caller over detection', async () => {
    const path = file('lat.csv', '12\n13\n');
    await expect(readLatencyFile(path)).rejects.toThrow('names no latency column');
    expect((await readLatencyFile(path, { format: 'lines' })).format).toBe('lines');
  });

  it('reports a missing file, an unknown format and bad options clearly', async () => {
    await expect(readLatencyFile(join(dir, 'nope.csv'))).rejects.toThrow(
      /nope\.csv: cannot open the file \(no such file\)/,
    );
    await expect(readLatencyFile(file('x.bin', '!!!'))).rejects.toThrow("cannot tell the file's format");
    await expect(readLatencyFile(file('y.csv', 'latency\n1\n'), { sliceMs: 0 })).rejects.toThrow('`sliceMs`');
    await expect(readLatencyFile(dir)).rejects.toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    await expect(readLatencyFile(file('bad.json', '{"format":'))).rejects.toThrow('bad.json: not valid JSON');
  });

  it('names the line of a bad value deep in a large file', async () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => String(10 + (i % 90)));
    rows[41_999] = '12ms';
    await expect(readLatencyFile(file('big.txt', `${rows.join('\n')}\n`))).rejects.toThrow(
      'big.txt:42000: latency "12ms" is not a number',
    );
  });
});
