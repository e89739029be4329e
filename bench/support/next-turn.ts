/**
 * Answers for the in-memory transports of the client benches: delivered in batches on the next
 * `setImmediate`, like responses read from sockets in one turn of the event loop.
 */
let queue: Array<() => void> = [];
let scheduled = false;

function flush(): void {
  scheduled = false;
  const batch = queue;
  queue = [];
  for (const run of batch) run();
}

/** Resolves with what `deliver` returns, called with the rest of this turn's answers on the next one. */
export function onNextTurn<T>(deliver: () => T): Promise<T> {
  return new Promise((resolve) => {
    queue.push(() => resolve(deliver()));
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
}
