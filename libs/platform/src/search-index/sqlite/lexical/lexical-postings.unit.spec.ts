import { LexicalTable } from './lexical-postings';

describe('PostingList title counts (docs/search.md, "Lexical index at scale")', () => {
  /** A table of `rows` rows, each with the term 'a' in its text, and in its title from row `titledFrom` on. */
  function table(rows: number, titledFrom: number, share = false): LexicalTable {
    const t = new LexicalTable([1, 2]);
    for (let r = 0; r < rows; r++) {
      const id = t.addRow(r + 1, 5);
      t.addPosting('a', id, 1 + (r % 3), r >= titledFrom ? 1 + (r % 5) : 0);
      if (share && r === 5000) t.lists.get('a')!.share(); // moved to shared memory half-way, as a two-thread query does
    }
    return t;
  }

  it.each([
    ['never in a title', Infinity, false],
    ['first in a title after 9,000 rows (past the shared-memory size)', 9000, false],
    ['in a title from the first row', 0, false],
    ['first in a title after being shared', 7000, true],
  ] as const)('reads back every count pushed when the term is %s', (_, titledFrom, share) => {
    const rows = 12_000;
    const list = table(rows, titledFrom, share).lists.get('a')!;
    expect(list.n).toBe(rows);
    const r = Array.from({ length: rows }, (_, i) => i);
    expect(Array.from(list.text.subarray(0, rows))).toEqual(r.map((i) => 1 + (i % 3)));
    expect(Array.from(list.title.subarray(0, rows))).toEqual(r.map((i) => (i >= titledFrom ? 1 + (i % 5) : 0)));
    if (share) expect(list.title.buffer).toBeInstanceOf(SharedArrayBuffer);
  });

  it('holds no title array for a term never in a title: 2 bytes a posting less', () => {
    const untitled = table(12_000, Infinity).lists.get('a')!;
    const titled = table(12_000, 0).lists.get('a')!;
    expect(titled.bytes() - untitled.bytes()).toBe(titled.title.byteLength);
    expect(titled.title.byteLength).toBeGreaterThanOrEqual(2 * 12_000);
  });

  it('builds a list with an eighth to spare, a very short one exactly full and grown by half, keeping every posting', () => {
    for (const [built, room, most] of [
      [100_000, 112_500, 112_500],
      [100, 113, 113],
      [40, 40, 60],
    ]) {
      const t = new LexicalTable([1, 1]);
      for (let r = 0; r <= built; r++) t.addRow(r + 1, 5);
      for (let id = 0; id < built; id++) t.addPosting('a', id, 1 + (id % 7), 0, built); // sized as a build sizes it
      const list = t.lists.get('a')!;
      expect(list.ids.length).toBe(room);
      const ids = list.ids;
      t.addPosting('a', built, 3, 0); // the first row written after the build
      expect(list.n).toBe(built + 1);
      expect(list.ids.length).toBe(most);
      expect(list.text.length).toBe(most);
      // With room to spare, the list is appended to in place: no copy, nothing left to collect.
      expect(list.ids === ids).toBe(room > built);
      expect(Array.from(list.ids.subarray(built - 2, built + 1))).toEqual([built - 2, built - 1, built]);
      expect(Array.from(list.text.subarray(built - 2, built + 1))).toEqual([1 + ((built - 2) % 7), 1 + ((built - 1) % 7), 3]);
    }
    // Past its room, a long list grows by an eighth.
    const t = new LexicalTable([1, 1]);
    for (let r = 0; r <= 112_500; r++) t.addRow(r + 1, 5);
    for (let id = 0; id <= 112_500; id++) t.addPosting('a', id, 1, 0, 100_000);
    expect(t.lists.get('a')!.ids.length).toBe(Math.ceil(112_500 * 1.125));
  });

  it('keeps a term of up to 8 rows in the compact store, read back as a list, and gives it a list at the 9th', () => {
    const t = new LexicalTable([1, 2]);
    for (let r = 0; r < 40; r++) t.addRow(r + 1, 3 + r);
    const rows = [2, 5, 7, 11, 13, 17, 19, 23];
    rows.forEach((id, i) => t.addPosting('rare', id, 1 + i, i % 2));
    expect(t.lists.has('rare')).toBe(false);
    const read = t.list('rare')!;
    expect(read.n).toBe(8);
    expect(Array.from(read.ids.subarray(0, 8))).toEqual(rows);
    expect(Array.from(read.text.subarray(0, 8))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(Array.from(read.title.subarray(0, 8))).toEqual([0, 1, 0, 1, 0, 1, 0, 1]);
    expect(read.blockMaxF[0]).toBe(8 + 2 * 1); // text 8 + title weight 2 × 1
    expect(read.blockMinLen[0]).toBe(3 + 2); // the shortest of its rows
    expect(t.df('rare')).toBe(8);
    t.remove(5 + 1); // the row of internal id 5
    expect(t.df('rare')).toBe(7);
    expect(t.terms()).toEqual(['rare']);
    t.addPosting('rare', 29, 9, 0);
    expect(t.lists.has('rare')).toBe(true);
    expect(Array.from(t.list('rare')!.ids.subarray(0, 9))).toEqual([...rows, 29]);
    expect(t.df('rare')).toBe(8);
    expect(t.list('none')).toBeUndefined();
    expect(t.df('none')).toBe(0);
    // A new rare term goes to the store; a term a build knows to be in more rows gets its list at once.
    t.addPosting('other', 3, 1, 0);
    t.addPosting('common', 4, 1, 0, 30);
    expect(t.lists.has('other')).toBe(false);
    expect(t.lists.has('common')).toBe(true);
    expect(t.terms().sort()).toEqual(['common', 'other', 'rare']);
  });
});
