/**
 * Source of the worker thread that runs the Universal Sentence Encoder lite. It is plain JavaScript kept as a
 * string so that one file works under ts-jest, ts-node and the compiled build alike (a `.ts` worker file would
 * need a loader in each). Model inference is synchronous CPU work of up to seconds per batch: on the main
 * thread it would stall every HTTP request, so it runs here.
 *
 * Protocol: the worker posts `{ ready, loadMs }` (or `{ error }`) once the model is loaded; then for each
 * `{ id, texts }` it answers `{ id, vectors }` (one flat Float32Array, transferred) or `{ id, error }`.
 */
export const USE_LITE_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const started = performance.now();
(async () => {
  const { initModel } = require(workerData.embeddingsModule);
  const { modelSource } = require(workerData.weightsModule);
  let model;
  try {
    model = await initModel(modelSource);
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.stack || e) });
    return;
  }
  parentPort.postMessage({ ready: true, loadMs: performance.now() - started });
  let chain = Promise.resolve();
  parentPort.on('message', (msg) => {
    // One batch at a time: interleaved batches would only add memory, not speed, on one thread.
    chain = chain.then(async () => {
      try {
        const rows = await model.embed(msg.texts);
        const flat = new Float32Array(rows.length * workerData.dimensions);
        rows.forEach((row, i) => flat.set(row, i * workerData.dimensions));
        parentPort.postMessage({ id: msg.id, vectors: flat }, [flat.buffer]);
      } catch (e) {
        parentPort.postMessage({ id: msg.id, error: String(e && e.message || e) });
      }
    });
  });
})();
`;
