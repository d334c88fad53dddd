import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { testEvent } from '../contract/event-store.contract';
import type { ReadAllOptions } from '../event-store.port';
import { SqliteEventStore } from './sqlite-event-store';

/** The tail of recent appends that projections read from (`shared: true`) answers exactly as the file does. */
describe.each(['inline', 'thread'] as const)('SqliteEventStore shared reads (%s writer)', (writer) => {
  let dir: string;
  let sqlite: SqliteDatabase;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'es-tail-'));
    sqlite = new SqliteDatabase({ path: join(dir, 'events.db'), synchronous: 'NORMAL' });
    store = new SqliteEventStore(sqlite, { writer });
  });
  afterEach(async () => {
    await store.close();
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const reads: ReadAllOptions[] = [
    { after: 0 },
    { after: 2, maxCount: 3 },
    { after: 1, filter: { types: ['Wanted'] } },
    { after: 3, filter: { categories: ['doc'] }, maxCount: 2 },
    { after: 1, filter: { types: ['Wanted', 'Other'], categories: ['corpus'] } },
  ];
  const expectSameAsFile = async (from: SqliteEventStore) => {
    for (const options of reads) expect(await from.readAll({ ...options, shared: true })).toEqual(await from.readAll(options));
  };

  it('gives what the file holds, and the same decoded event to every shared reader', async () => {
    await store.append('corpus-a', [testEvent('Wanted', { n: 1 })]);
    await Promise.all([store.append('doc-1', [testEvent('Other'), testEvent('Wanted', { text: 'é "quoted"' })]), store.append('doc-2', [testEvent('Wanted')])]);
    store.appendSync('corpus-a', [testEvent('Other', { nested: { list: [1, 2] } })]);
    await expectSameAsFile(store);
    const [first] = await store.readAll({ after: 1, maxCount: 1, shared: true });
    const [again] = await store.readAll({ after: 1, maxCount: 1, shared: true });
    expect(again).toBe(first);
  });

  it('reads the file once another connection has appended, before and after this one appends again', async () => {
    await store.append('doc-1', [testEvent('Wanted'), testEvent('Other')]);
    const otherDb = new SqliteDatabase({ path: join(dir, 'events.db'), synchronous: 'NORMAL' });
    const other = new SqliteEventStore(otherDb);
    await other.append('doc-2', [testEvent('Wanted', { by: 'other' })]);
    await expectSameAsFile(store);
    expect((await store.readAll({ after: 0, shared: true })).map((e) => e.streamId)).toEqual(['doc-1', 'doc-1', 'doc-2']);
    await store.append('corpus-a', [testEvent('Wanted')]);
    await expectSameAsFile(store);
    expect(await store.readAll({ after: 3, shared: true })).toHaveLength(1);
    otherDb.close();
  });
});
