import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dot } from '../vectors';
import { GloveEncoder } from './glove-encoder';
import { quantizeRows } from './glove-loader';

// The word table loads once for the file (from the cache, or the package where there is none); encoding is then immediate.
describe('GloveEncoder (the default built-in model)', () => {
  const encoder = new GloveEncoder();
  beforeAll(() => encoder.load(), 120_000); // a fresh clone parses the 307 MB package here: 13 s on session 20's machine, more under load

  it('gives 100-dimensional unit vectors from the vectors shipped in the npm package', async () => {
    const [v] = await encoder.encode(['Aspirin lowers the risk of heart attack.'], 'document');
    expect(v).toHaveLength(encoder.dimensions);
    expect(dot(v, v)).toBeCloseTo(1, 5);
  });

  it('is deterministic and order-preserving', async () => {
    const texts = ['cells divide', 'stars collapse', 'markets fall'];
    const a = await encoder.encode(texts, 'document');
    const b = await encoder.encode([...texts].reverse(), 'query');
    a.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from(b[2 - i])));
  });

  it('scores a sentence on the same subject above an unrelated one', async () => {
    const [query] = await encoder.encode(['drugs that prevent heart attacks'], 'query');
    const [close, unrelated] = await encoder.encode(
      ['Aspirin lowers the risk of myocardial infarction in older patients.', 'The football match was postponed because of snow.'],
      'document',
    );
    expect(dot(query, close)).toBeGreaterThan(dot(query, unrelated) + 0.1);
  });

  it('maps a text without known words to the zero vector', async () => {
    const [v] = await encoder.encode(['~~~ qqzxqv'], 'query');
    expect(dot(v, v)).toBe(0);
  });

  it('stores each weighted row as bytes within half a step of its floats', async () => {
    const dims = 4;
    const matrix = new Float32Array([0.5, -0.25, 0.125, 0, 0, 0, 0, 0, -3, 2.9, 0.01, -0.02]);
    const { codes, scales } = await quantizeRows(matrix, dims);
    expect(Array.from(scales)).toEqual([Math.fround(0.5 / 127), 0, Math.fround(3 / 127)]);
    expect(Array.from(codes.subarray(0, 4))).toEqual([127, -64, 32, 0]);
    for (let i = 0; i < matrix.length; i++) {
      const step = scales[Math.floor(i / dims)];
      expect(Math.abs(codes[i] * step - matrix[i])).toBeLessThanOrEqual(step / 2 + 1e-9);
    }
    expect(Array.from(codes.subarray(4, 8))).toEqual([0, 0, 0, 0]); // a zero row stays zero
  });

  it('keeps the parsed table in a cache that the next process reads back to the same vectors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'glove-cache-'));
    try {
      // A table in the package's format, small: the parse and the cache are the code under test, not the 307 MB
      // (the suite's encoder above parsed the package itself wherever no cache was there yet).
      const words = ['aspirin', 'lowers', 'the', 'risk', 'stars', 'collapse'];
      const vectors = Object.fromEntries(words.map((w, i) => [w, Array.from({ length: 100 }, (_, k) => Math.sin(i * 100 + k))]));
      const packageFile = join(dir, 'table.json');
      writeFileSync(packageFile, JSON.stringify({ dimensions: 100, words, vectors }));
      const texts = ['Aspirin lowers the risk of heart attack.', 'stars collapse'];
      const first = new GloveEncoder({ cacheDir: dir, packageFile });
      const fromPackage = await first.encode(texts, 'document');
      expect(dot(fromPackage[0], fromPackage[0])).toBeCloseTo(1, 5);
      expect(existsSync(join(dir, 'glove-6b-100d.v2.q8'))).toBe(true);
      // From here the source is gone: only the cache can give these vectors.
      rmSync(packageFile);
      const second = new GloveEncoder({ cacheDir: dir, packageFile });
      expect((await second.encode(texts, 'document')).map((v) => Array.from(v))).toEqual(fromPackage.map((v) => Array.from(v)));
      // The cache is what a later process reads: a table of zeros of the right size gives zero vectors.
      const size = readFileSync(join(dir, 'glove-6b-100d.v2.q8')).byteLength;
      writeFileSync(join(dir, 'glove-6b-100d.v2.q8'), Buffer.alloc(size));
      const [zero] = await new GloveEncoder({ cacheDir: dir, packageFile }).encode(texts, 'document');
      expect(dot(zero, zero)).toBe(0);
      // A damaged cache (wrong size) is ignored and rebuilt from the source, never read as vectors.
      writeFileSync(packageFile, JSON.stringify({ dimensions: 100, words, vectors }));
      writeFileSync(join(dir, 'glove-6b-100d.v2.q8'), Buffer.alloc(16));
      const third = new GloveEncoder({ cacheDir: dir, packageFile });
      expect((await third.encode(texts, 'document')).map((v) => Array.from(v))).toEqual(fromPackage.map((v) => Array.from(v)));
      expect(readFileSync(join(dir, 'glove-6b-100d.v2.q8')).byteLength).toBe(size);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
