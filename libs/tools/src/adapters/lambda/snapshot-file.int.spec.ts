import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SnapshotFile } from './snapshot-file';

describe('SnapshotFile (the lambda start snapshot kept in DATA_DIR)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'snapshot-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const fail = (e: Error) => {
    throw e;
  };

  it('gives back what was written, under its key only, and removes the stale key', () => {
    const data = Buffer.from('pyodide memory');
    new SnapshotFile(dir, 'old').write(Buffer.from('older'), fail);
    new SnapshotFile(dir, 'k1').write(data, fail);
    expect(new SnapshotFile(dir, 'k1').read()).toEqual(data);
    expect(new SnapshotFile(dir, 'k2').read()).toBeUndefined();
    expect(readdirSync(dir)).toEqual(['snapshot-k1.bin']);
  });

  it('refuses and removes a torn or altered file instead of handing it to a sandbox', () => {
    new SnapshotFile(dir, 'k').write(Buffer.alloc(1000, 7), fail);
    const file = join(dir, 'snapshot-k.bin');
    writeFileSync(file, readFileSync(file).subarray(0, 600));
    expect(new SnapshotFile(dir, 'k').read()).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
    expect(new SnapshotFile(dir, 'k').read()).toBeUndefined();
  });

  it('reports a directory it cannot write to instead of throwing', () => {
    writeFileSync(join(dir, 'file'), 'x');
    const errors: string[] = [];
    new SnapshotFile(join(dir, 'file', 'lambda'), 'k').write(Buffer.from('x'), (e) => errors.push(e.message));
    expect(errors).toHaveLength(1);
  });
});
