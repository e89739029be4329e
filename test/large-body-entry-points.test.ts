import type http from 'node:http';
import { Agent } from 'undici';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dependency } from '../src/client/dependency.js';
import { prazoInterceptor } from '../src/client/interceptor.js';
import { startServer, type TestServer, warmUp } from './support/servers.js';

// A body larger than any buffer on the way pauses the connection many times; every entry point
// must resume it, whoever reads the body and however soon after the pause it asks for more.

beforeAll(warmUp);

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const CHUNK = Buffer.alloc(64 * 1024, 7);
const CHUNKS = 64; // 4 MiB

async function blobServer(): Promise<TestServer> {
  server = await startServer((_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    let left = CHUNKS;
    const write = (): void => {
      while (left > 0) {
        left--;
        if (!res.write(CHUNK)) {
          res.once('drain', write);
          return;
        }
      }
      res.end();
    };
    write();
  });
  return server;
}

const options = (origin: string) => ({
  name: 'blobs',
  origins: [origin],
  latency: { p99Ms: 300 },
  userDeadlineMs: 5_000,
});

describe('a 4 MiB body', () => {
  it('arrives whole through the interceptor, read by undici’s own body', async () => {
    const { origin } = await blobServer();
    const interceptor = prazoInterceptor({ dependencies: [options(origin)] });
    const agent = new Agent();
    try {
      const { body } = await agent.compose(interceptor).request({ origin, path: '/blob', method: 'GET' });
      const bytes = new Uint8Array(await body.arrayBuffer());
      expect(bytes.byteLength).toBe(CHUNKS * CHUNK.length);
      expect(bytes.every((b) => b === 7)).toBe(true);
    } finally {
      await interceptor.close();
      await agent.close();
    }
  });

  it('arrives whole through dep.fetch(), read from the Response', async () => {
    const { origin } = await blobServer();
    const dep = dependency(options(origin));
    try {
      const bytes = new Uint8Array(await (await dep.fetch('/blob')).arrayBuffer());
      expect(bytes.byteLength).toBe(CHUNKS * CHUNK.length);
      expect(bytes.every((b) => b === 7)).toBe(true);
    } finally {
      await dep.close();
    }
  });

  it('arrives whole through dep.request(), read as a stream', async () => {
    const { origin } = await blobServer();
    const dep = dependency(options(origin));
    try {
      const response = await dep.request({ path: '/blob' });
      let total = 0;
      for await (const chunk of response.body) total += (chunk as Uint8Array).byteLength;
      expect(total).toBe(CHUNKS * CHUNK.length);
    } finally {
      await dep.close();
    }
  });
});
