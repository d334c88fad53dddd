/**
 * Gives the event loop a full turn (timers, I/O, other requests) before going on. Long work on one request — a
 * document of tens of thousands of parts — awaits this between its phases, so that no single phase holds the
 * loop for much more than its own share. `await` on a settled promise would not (microtasks run before any
 * I/O), nor would one `setImmediate` from I/O work: the poll phase goes straight on to the check phase of the
 * same turn, before any timer. Two immediates always span the timers and poll phases of a turn.
 */
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

/**
 * Runs a generator of synchronous steps to its end, giving the loop a turn whenever `sliceMs` of steps have run,
 * and returns what it returns (or throws what it throws). For work that cannot be bounded up front (a document's
 * chunking, its encoding) but can stop between steps.
 */
export async function runInSlices<T>(steps: Generator<unknown, T>, sliceMs = 8): Promise<T> {
  let slice = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - slice >= sliceMs) {
      await yieldToLoop();
      slice = performance.now();
    }
  }
}

/**
 * Runs `work` and counts the turns the event loop took meanwhile: tests of work that must leave other requests a
 * turn (a large document, a long scan on a thread). Work that holds the loop throughout counts none.
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let done = false;
  const tick = () => {
    turns++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { value: await work(), turns };
  } finally {
    done = true;
  }
}
