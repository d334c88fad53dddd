import { BLOCK, PostingList } from './lexical-postings';

/** A list grown by appends, as a corpus ingested after its index was built grows it. */
function appended(n: number, sparse: boolean): PostingList {
  const list = new PostingList(4, sparse);
  for (let i = 0; i < n; i++) list.push(i * 3, (i % 5) + 1, i % 2, (i % 5) + 1 + (i % 2), 10 + (i % 40));
  return list;
}

const contents = (l: PostingList) => ({
  ids: Array.from(l.ids.subarray(0, l.n)),
  text: Array.from(l.text.subarray(0, l.n)),
  title: Array.from(l.title.subarray(0, l.n)),
  lens: l.lens && Array.from(l.lens.subarray(0, l.n)),
  blockMaxF: Array.from(l.blockMaxF.subarray(0, Math.ceil(l.n / BLOCK))),
  blockMinLen: Array.from(l.blockMinLen.subarray(0, Math.ceil(l.n / BLOCK))),
});

describe('PostingList.trim: the room appends left is given back (docs/search.md, "Lexical index")', () => {
  it.each([
    ['dense, in shared memory', 7_500, false],
    ['sparse (lengths alongside), in the heap', 1_000, true],
  ] as const)('keeps a %s list\'s postings and block bounds, at its size', (_, n, sparse) => {
    const list = appended(n, sparse);
    const before = contents(list);
    const bytes = list.bytes();
    const wasShared = list.ids.buffer instanceof SharedArrayBuffer;
    expect(list.ids.length).toBeGreaterThan(n + n / 16);

    const freed = list.trim();
    expect(freed).toBe(bytes - list.bytes());
    expect(freed).toBeGreaterThan(0);
    expect(list.ids.length).toBe(n);
    expect(list.text.length).toBe(n);
    expect(list.blockMaxF.length).toBe(Math.ceil(n / BLOCK));
    expect(contents(list)).toEqual(before);
    expect(list.ids.buffer instanceof SharedArrayBuffer).toBe(wasShared);
    // Nothing left to give: a second trim copies nothing.
    expect(list.trim()).toBe(0);
  });

  it('grows again after a trim, with the partly filled block\'s bounds kept', () => {
    const list = appended(100, false);
    list.trim();
    list.push(1000, 9, 0, 9, 3);
    list.push(1003, 1, 0, 1, 50);
    expect(list.n).toBe(102);
    expect(Array.from(list.ids.subarray(98, 102))).toEqual([294, 297, 1000, 1003]);
    // Posting 100 and 101 fall in block 1 (64..127), whose bounds now include them.
    expect(list.blockMaxF[1]).toBe(9);
    expect(list.blockMinLen[1]).toBe(3);
    expect(contents(list).ids.slice(0, 100)).toEqual(contents(appended(100, false)).ids);
  });
});
