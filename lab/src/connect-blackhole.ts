import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';

/**
 * A port on which new connects time out, made on loopback without firewall rules.
 *
 * How: a worker thread listens on the port with a backlog of 1 and then blocks in `Atomics.wait`,
 * so nothing ever calls `accept()`. We open connections to it until the kernel's accept queue is
 * full (two on Linux for a backlog of 1); from then on the kernel drops every new SYN and the
 * client's connect hangs until its own connect timeout. If the queue never fills (another kernel),
 * connects succeed but nothing ever reads them: the closest thing, a hang before headers.
 */
export interface ConnectBlackhole {
  /** True when the accept queue was filled (new connects time out rather than hang after connect). */
  readonly filled: boolean;
  /** Unblocks and ends the worker, closes the filler connections; the port is free afterwards. */
  close(): Promise<void>;
}

const MAX_FILLERS = 16;
/** A loopback connect completes in well under a millisecond; 250 ms without one means the SYN was dropped. */
const FILL_PROBE_MS = 250;

// CommonJS, evaluated as a worker: listen, report the port, then block the thread until told to stop.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const flag = new Int32Array(workerData.flag);
const server = net.createServer();
server.on('error', (error) => { parentPort.postMessage({ error: error.code || String(error) }); });
server.listen({ port: workerData.port, host: workerData.host, backlog: 1 }, () => {
  parentPort.postMessage({ listening: true });
  setImmediate(() => {
    while (Atomics.load(flag, 0) === 0) Atomics.wait(flag, 0, 0);
    process.exit(0);
  });
});
`;

/**
 * Starts a connect blackhole on `host:port` (the port must be free).
 *
 * @throws Error with the listen error code (e.g. `EADDRINUSE`) when the port cannot be taken.
 */
export async function startConnectBlackhole(host: string, port: number): Promise<ConnectBlackhole> {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { flag: flag.buffer, host, port } });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const stop = async () => {
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    await exited;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once('message', (message: { listening?: boolean; error?: string }) =>
        message.listening
          ? resolve()
          : reject(new Error(`connect blackhole could not listen: ${message.error}`)),
      );
      worker.once('error', reject);
      worker.once('exit', () => reject(new Error('connect blackhole worker exited before listening')));
    });
  } catch (error) {
    await stop();
    throw error;
  }

  const fillers: Socket[] = [];
  let filled = false;
  for (let i = 0; i < MAX_FILLERS && !filled; i++) {
    const socket = connect({ host, port });
    socket.on('error', () => {});
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), FILL_PROBE_MS);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(true);
      });
      socket.once('close', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (connected) fillers.push(socket);
    else {
      socket.destroy();
      filled = true;
    }
  }

  return {
    filled,
    async close() {
      await stop();
      for (const socket of fillers) socket.destroy();
    },
  };
}
