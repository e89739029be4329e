/**
 * Exact retained size of one object, from a V8 heap snapshot: the bytes that become garbage if
 * `probe.target` is dropped. Deltas of `process.memoryUsage()` swing by ±300 KB on this machine
 * (JIT code, feedback, lazy sweeping), too coarse to show that a budget stays the same size; a
 * snapshot counts objects, not pages, so it is exact and repeatable.
 *
 * Method: the probe hangs off a global; mark everything reachable from the snapshot root over strong
 * edges (handles and stack slots left out: they are transient), once normally and once without
 * entering the probe; the retained set is the difference, minus the probe itself and compiled
 * code. Typed-array backing stores appear in the snapshot as native nodes and are counted.
 */
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';

/**
 * Wrap the object to measure in a probe and keep no other reference to it while measuring — not
 * even in a live stack slot: take the measurement in a later task than the one that built it.
 */
export class RetainedSizeProbe<T extends object> {
  target: T;
  constructor(target: T) {
    this.target = target;
  }
}

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export function retainedBytes(probe: RetainedSizeProbe<object>): number {
  (globalThis as { __retainedSizeProbe?: unknown }).__retainedSizeProbe = probe;
  const file = join(tmpdir(), `prazo-bench-${process.pid}-${Date.now()}.heapsnapshot`);
  v8.writeHeapSnapshot(file);
  let snap: Snapshot;
  try {
    snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  } finally {
    rmSync(file, { force: true });
  }
  const { node_fields: nodeFields, edge_fields: edgeFields, edge_types: edgeTypes } = snap.snapshot.meta;
  const nf = nodeFields.length;
  const ef = edgeFields.length;
  const typeAt = nodeFields.indexOf('type');
  const objectType = snap.snapshot.meta.node_types[0].indexOf('object');
  const nameAt = nodeFields.indexOf('name');
  const sizeAt = nodeFields.indexOf('self_size');
  const edgeCountAt = nodeFields.indexOf('edge_count');
  const edgeTypeAt = edgeFields.indexOf('type');
  const toNodeAt = edgeFields.indexOf('to_node');
  const weak = edgeTypes[0].indexOf('weak');
  const { nodes, edges, strings } = snap;
  const count = nodes.length / nf;

  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0; i < count; i += 1) firstEdge[i + 1] = firstEdge[i]! + nodes[i * nf + edgeCountAt]! * ef;

  // The probe is the one object whose constructor name is RetainedSizeProbe.
  const probeIndexes: number[] = [];
  for (let i = 0; i < count; i += 1) {
    if (nodes[i * nf + typeAt] === objectType && strings[nodes[i * nf + nameAt]!] === 'RetainedSizeProbe') {
      probeIndexes.push(i);
    }
  }
  if (probeIndexes.length !== 1)
    throw new Error(`expected one RetainedSizeProbe, found ${probeIndexes.length}`);
  const probeIndex = probeIndexes[0]!;

  // Handles and stack slots are transient roots (the snapshot machinery itself holds some); the
  // probe is reached through a global instead, so only heap references count.
  const transient = new Uint8Array(count);
  const codeType = snap.snapshot.meta.node_types[0].indexOf('code');
  for (let i = 0; i < count; i += 1) {
    const name = strings[nodes[i * nf + nameAt]!];
    if (name === '(Handle scope)' || name === '(Stack roots)') transient[i] = 1;
  }
  // An optimising-compiler job in flight holds the objects it specialises on in an identity map
  // under "(Strong roots)"; that is the JIT looking at the budget, not the budget's memory.
  const internal = edgeTypes[0].indexOf('internal');
  const nameOrIndexAt = edgeFields.indexOf('name_or_index');
  const isCompilerHandle = (e: number): boolean =>
    edges[e + edgeTypeAt] === internal &&
    strings[edges[e + nameOrIndexAt]!]?.endsWith('IdentityMapBase') === true;
  const mark = (skip: number): Uint8Array => {
    const seen = new Uint8Array(count);
    const stack = [0];
    seen[0] = 1;
    while (stack.length > 0) {
      const n = stack.pop()!;
      for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += ef) {
        if (edges[e + edgeTypeAt] === weak || isCompilerHandle(e)) continue;
        const to = edges[e + toNodeAt]! / nf;
        if (to === skip || seen[to] || transient[to]) continue;
        seen[to] = 1;
        stack.push(to);
      }
    }
    return seen;
  };
  const all = mark(-1);
  const withoutProbe = mark(probeIndex);
  let bytes = 0;
  for (let i = 0; i < count; i += 1) {
    // Compiled code is not data: optimised code specialised to the budget's closures would be
    // counted otherwise, and it depends on what the JIT happened to do.
    if (all[i] && !withoutProbe[i] && i !== probeIndex && nodes[i * nf + typeAt] !== codeType) {
      bytes += nodes[i * nf + sizeAt]!;
    }
  }
  delete (globalThis as { __retainedSizeProbe?: unknown }).__retainedSizeProbe;
  return bytes;
}
