import { CompactTerms } from './lexical-compact-terms';

/** Postings per block whose bound (most weighted occurrences, shortest row) the top-k search may skip by. */
export const BLOCK = 64;
/** A list in fewer than one row in this many (when made) keeps its rows' lengths alongside (PostingList.lens). */
const SPARSE = 16;
/** Counts are stored in 16 bits; a term seen more often in one row makes its queries fall back to FTS5. */
const MAX_COUNT = 0xffff;

type Typed = Uint32Array | Uint16Array | Int32Array | Float64Array | Uint8Array;
type TypedClass<T> = { new (n: number): T; new (buffer: SharedArrayBuffer): T; readonly BYTES_PER_ELEMENT: number };

/**
 * Arrays this long or longer are made in shared memory, where the ranking thread reads them in place: a query's
 * long lists are then never copied there (copying them at first use cost ~200 MB of RSS at 1M rows, the old
 * arrays' memory kept by the allocator); shorter ones are copied by share() when a query ranks on two threads.
 */
const SHARED_FROM = 4096;

function alloc<T extends Typed>(Type: TypedClass<T>, length: number, shared = length >= SHARED_FROM): T {
  return shared ? new Type(new SharedArrayBuffer(length * Type.BYTES_PER_ELEMENT)) : new Type(length);
}

/** A new array of `length` elements of `a`'s type, in shared memory when `a` is or when long. */
function like<T extends Typed>(a: T, length: number): T {
  return alloc(a.constructor as TypedClass<T>, length, a.buffer instanceof SharedArrayBuffer || length >= SHARED_FROM);
}

/** The array itself when in shared memory, else a copy there: shared once, an array stays shared as it grows. */
export function shared<T extends Typed>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const b = alloc(a.constructor as TypedClass<T>, a.length, true);
  b.set(a);
  return b;
}

/**
 * Zeros in shared memory, at least as long as any untitled list: what a list whose rows never held the term in a
 * title reads as its title counts. Most corpora have no part titles, and a common word's title counts are mostly
 * zero: an array of them per list was 2 bytes a posting (a fifth of the postings' memory at 1M rows) holding
 * nothing. Grown (a new array) as lists do; a list keeps the one it took while long enough. Read, never written.
 */
let zeros = new Uint16Array(new SharedArrayBuffer(2 * 1024));

function zerosFor(length: number): Uint16Array {
  if (zeros.length < length) zeros = new Uint16Array(new SharedArrayBuffer(2 * Math.max(length, Math.ceil(zeros.length * 1.5))));
  return zeros;
}

/** A long list's growth when full, and the room a new list is built with. */
const LONG_GROWTH = 1.125;

/**
 * A full array's growth: by half while short, by an eighth from {@link SHARED_FROM} elements on. A build makes each
 * list exactly as long as it needs, so the first rows written after it grow every list they touch, and those are the
 * common terms' lists, which hold most of the postings: growing them by half took the parts' postings of a million
 * rows from 374 to 541 MB with 2,000 rows written after the build; by an eighth, to 417 (session 18). The cost is a
 * copy of the list every eighth of its length (a memcpy).
 */
function growth(length: number): number {
  return length < SHARED_FROM ? 1.5 : LONG_GROWTH;
}

/** Lists of fewer known rows are made exactly full (what they leave to collect when they grow is small). */
const ROOM_FROM = 64;

/**
 * A new list's capacity for `rows` known rows (a build knows each term's): an eighth more. Built exactly full, every
 * list the first rows written after the build touch was replaced by a copy, and the common terms' lists they all
 * touch hold most of the postings: with 20,000 chunks written after a restart at 1M, the replaced arrays (~600 MB)
 * stayed in the process's memory once freed (RSS 1,724 → 2,354 MB; with room in long lists only, 2,036; session 18).
 */
function withRoom(rows: number): number {
  return rows < ROOM_FROM ? rows : Math.ceil(rows * LONG_GROWTH);
}

function grown<T extends Typed>(a: T, need: number, fill?: number): T {
  if (need <= a.length) return a;
  const b = like(a, Math.max(need, Math.ceil(a.length * growth(a.length)), 16));
  if (fill !== undefined) b.fill(fill);
  b.set(a);
  return b;
}

/**
 * One term's postings in internal-id order: each row's occurrences in the text and title columns, and per block of
 * {@link BLOCK} the largest weighted count and the shortest row, which bound any BM25 contribution in the block.
 */
export class PostingList {
  ids: Uint32Array;
  text: Uint16Array;
  /** The rows' title counts, or shared zeros (at least `n` long) while none of them is non-zero. */
  title: Uint16Array;
  private titled = false;
  blockMaxF: Float64Array;
  blockMinLen: Uint32Array;
  /**
   * In a sparse list, each posting's row length alongside (bm25()'s D): its rows are far apart, so reading the
   * table's lengths by id is a cache miss a posting, in the merge loop that dominates a query. Dropped for good if a
   * row has 65,536 tokens or more (the table's 32-bit lengths are read then).
   */
  lens?: Uint16Array;
  n = 0;
  /** Live rows holding the term, counted when deletions made `n` an over-count; valid for one deletion epoch. */
  df = 0;
  dfEpoch = -1;

  constructor(capacity: number, sparse = false) {
    this.ids = alloc(Uint32Array, Math.max(capacity, 1));
    this.text = alloc(Uint16Array, this.ids.length);
    this.title = zerosFor(this.ids.length);
    if (sparse) this.lens = alloc(Uint16Array, this.ids.length);
    this.blockMaxF = new Float64Array(Math.ceil(this.ids.length / BLOCK));
    this.blockMinLen = new Uint32Array(this.blockMaxF.length).fill(0xffffffff);
  }

  /** Appends a row with a larger internal id than any before; `f` is the weighted count, `len` the row's length. */
  push(id: number, text: number, title: number, f: number, len: number): void {
    const i = this.n++;
    if (i >= this.ids.length) {
      this.ids = grown(this.ids, i + 1);
      this.text = grown(this.text, this.ids.length);
      this.title = this.titled ? grown(this.title, this.ids.length) : zerosFor(this.ids.length);
      if (this.lens) this.lens = grown(this.lens, this.ids.length);
    }
    this.ids[i] = id;
    this.text[i] = text;
    if (title !== 0 && !this.titled) {
      this.title = like(this.text, this.ids.length); // zeros so far, shared as the text counts are
      this.titled = true;
    }
    if (this.titled) this.title[i] = title;
    if (this.lens && len > 0xffff) this.lens = undefined;
    else if (this.lens) this.lens[i] = len;
    const b = (i / BLOCK) | 0;
    if (b >= this.blockMaxF.length) {
      this.blockMaxF = grown(this.blockMaxF, b + 1);
      this.blockMinLen = grown(this.blockMinLen, this.blockMaxF.length, 0xffffffff);
    }
    if (f > this.blockMaxF[b]) this.blockMaxF[b] = f;
    if (len < this.blockMinLen[b]) this.blockMinLen[b] = len;
  }

  /**
   * Moves the postings to shared memory, for the ranking thread to read them in place (lexical-thread.ts): only
   * lists a large query ranked on two threads pay for it; pushes after that grow them in shared memory.
   */
  share(): void {
    this.ids = shared(this.ids);
    this.text = shared(this.text);
    this.title = shared(this.title);
    if (this.lens) this.lens = shared(this.lens);
  }

  /** Bytes held (the arrays' capacity, as allocated). */
  bytes(): number {
    return this.ids.byteLength + this.text.byteLength + (this.titled ? this.title.byteLength : 0) + (this.lens?.byteLength ?? 0) + this.blockMaxF.byteLength + this.blockMinLen.byteLength;
  }
}

/** A list's objects beside its arrays (the list, the arrays' headers, its map entry): ~900–1,100 B on the heap. */
const LIST_OBJECT_BYTES = 1_000;
/**
 * The inverted index of one FTS5 table: rows get dense internal ids in the order they are added (rowid order when
 * built), so every posting list stays sorted by appending; a deleted or replaced row is a tombstone until the
 * table is rebuilt. Row count and total length are those of the live rows, as FTS5's averages record holds them.
 */
export class LexicalTable {
  /** Terms in more than {@link CompactTerms.MAX} rows (or built with room for more); the others are in `compact`. */
  readonly lists = new Map<string, PostingList>();
  private readonly compact = new CompactTerms();
  /** Terms counted more than 65,535 times in a row: their queries fall back to FTS5. */
  readonly inexact = new Set<string>();
  rowidOf = new Uint32Array(1024);
  lens = new Uint32Array(1024);
  live = new Uint8Array(1024);
  /** Per internal id, the part's document row (parts table only). */
  docRow = new Int32Array(1024);
  private internalOf = new Int32Array(1024).fill(-1);
  count = 0;
  liveRows = 0;
  liveTokens = 0;
  dead = 0;
  /** Bumped by every deletion: cached live counts of terms are then recounted. */
  epoch = 0;

  constructor(readonly weights: readonly [number, number]) {}

  internal(rowid: number): number {
    return rowid < this.internalOf.length ? this.internalOf[rowid] : -1;
  }

  addRow(rowid: number, len: number, docRow = -1): number {
    const id = this.count++;
    if (id >= this.rowidOf.length) {
      this.rowidOf = grown(this.rowidOf, id + 1);
      this.lens = grown(this.lens, this.rowidOf.length);
      this.live = grown(this.live, this.rowidOf.length);
      this.docRow = grown(this.docRow, this.rowidOf.length);
    }
    this.internalOf = grown(this.internalOf, rowid + 1, -1);
    this.remove(rowid);
    this.rowidOf[id] = rowid;
    this.lens[id] = len;
    this.live[id] = 1;
    this.docRow[id] = docRow;
    this.internalOf[rowid] = id;
    this.liveRows++;
    this.liveTokens += len;
    return id;
  }

  /**
   * Appends the term's posting for row `id` (larger than any before for this term). `capacity`: the rows the term
   * is known to be in (a build knows); a term in at most {@link CompactTerms.MAX} goes to the compact store, and gets
   * a list of its own when a posting more comes.
   */
  addPosting(term: string, id: number, text: number, title: number, capacity = 4): void {
    if (text > MAX_COUNT || title > MAX_COUNT) this.inexact.add(term);
    const t = Math.min(text, MAX_COUNT);
    const h = Math.min(title, MAX_COUNT);
    let list = this.lists.get(term);
    if (!list) {
      if (this.compact.add(term, id, t, h, capacity <= CompactTerms.MAX)) return;
      if (this.compact.has(term)) {
        list = this.compacted(term, Math.max(capacity, 2 * CompactTerms.MAX));
        this.compact.remove(term);
      } else list = new PostingList(withRoom(capacity), capacity * SPARSE < this.count);
      this.lists.set(term, list);
    }
    this.push(list, id, t, h);
  }

  /** Every term some row holds (tests). */
  terms(): string[] {
    return [...this.lists.keys(), ...this.compact.terms()];
  }

  /** The term's postings, or undefined when no row holds it; a term of the compact store gets a list made for the call. */
  list(term: string): PostingList | undefined {
    const list = this.lists.get(term);
    if (list) return list;
    const n = this.compact.count(term);
    return n > 0 ? this.compacted(term, n) : undefined;
  }

  private push(list: PostingList, id: number, t: number, h: number): void {
    list.push(id, t, h, this.weights[0] * t + this.weights[1] * h, this.lens[id]);
  }

  /** A list of the term's postings in the compact store. */
  private compacted(term: string, capacity: number): PostingList {
    const list = new PostingList(capacity, capacity * SPARSE < this.count);
    this.compact.forEach(term, (id, t, h) => this.push(list, id, t, h));
    return list;
  }

  /** Moves what the ranking thread reads of the rows (liveness, 32-bit lengths) to shared memory, as lists' share(). */
  share(): void {
    this.live = shared(this.live);
    this.lens = shared(this.lens);
  }

  /** The row is gone or replaced: its postings stay as a tombstone. */
  remove(rowid: number): void {
    const id = this.internal(rowid);
    if (id < 0 || !this.live[id]) return;
    this.live[id] = 0;
    this.internalOf[rowid] = -1;
    this.liveRows--;
    this.liveTokens -= this.lens[id];
    this.dead++;
    this.epoch++;
  }

  /** Live rows holding the term (FTS5's hit count for its IDF). */
  df(term: string): number {
    const list = this.lists.get(term);
    if (!list) {
      if (this.dead === 0) return this.compact.count(term);
      let df = 0;
      this.compact.forEach(term, (id) => (df += this.live[id]));
      return df;
    }
    if (this.dead === 0) return list.n;
    if (list.dfEpoch !== this.epoch) {
      let df = 0;
      for (let i = 0; i < list.n; i++) df += this.live[list.ids[i]];
      list.df = df;
      list.dfEpoch = this.epoch;
    }
    return list.df;
  }

  bytes(): number {
    let b = this.rowidOf.byteLength + this.lens.byteLength + this.live.byteLength + this.docRow.byteLength + this.internalOf.byteLength;
    for (const [term, list] of this.lists) b += list.bytes() + 2 * term.length + LIST_OBJECT_BYTES;
    return b + this.compact.bytes();
  }
}
