/**
 * Terms in at most {@link CompactTerms.MAX} rows, kept in slots of flat arrays instead of a PostingList each: a list
 * and its five typed arrays are ~1.3 KB of objects even for a term in two rows, and most of a real corpus's
 * vocabulary is such terms (names, numbers, identifiers, misspellings: a million of them would have been 1.3 GB).
 * Here a term costs its map entry and a slot (~140 B; session 18, `npm run bench -- lexical-vocabulary`).
 */
export class CompactTerms {
  static readonly MAX = 8;
  private readonly slotOf = new Map<string, number>();
  /** Per slot, up to MAX postings: row (internal id), text and title counts; and how many. */
  private ids = new Uint32Array(CompactTerms.MAX * 256);
  private text = new Uint16Array(CompactTerms.MAX * 256);
  private title = new Uint16Array(CompactTerms.MAX * 256);
  private n = new Uint8Array(256);
  private slots = 0;
  private readonly free: number[] = [];

  has(term: string): boolean {
    return this.slotOf.has(term);
  }

  /** Rows holding the term here (0 when it is not here). */
  count(term: string): number {
    const slot = this.slotOf.get(term);
    return slot === undefined ? 0 : this.n[slot];
  }

  /** Appends a posting of a term already here, or of a new one when `create`; false when it is full, or absent and not created. */
  add(term: string, id: number, text: number, title: number, create: boolean): boolean {
    let slot = this.slotOf.get(term);
    if (slot === undefined) {
      if (!create) return false;
      this.slotOf.set(term, (slot = this.newSlot()));
    }
    if (this.n[slot] >= CompactTerms.MAX) return false;
    const at = slot * CompactTerms.MAX + this.n[slot]++;
    this.ids[at] = id;
    this.text[at] = text;
    this.title[at] = title;
    return true;
  }

  /** The term's postings in the order added. */
  forEach(term: string, f: (id: number, text: number, title: number) => void): void {
    const slot = this.slotOf.get(term);
    if (slot === undefined) return;
    for (let at = slot * CompactTerms.MAX; at < slot * CompactTerms.MAX + this.n[slot]; at++) f(this.ids[at], this.text[at], this.title[at]);
  }

  /** The term leaves (it got a list of its own); its slot serves the next new term. */
  remove(term: string): void {
    const slot = this.slotOf.get(term);
    if (slot === undefined) return;
    this.slotOf.delete(term);
    this.n[slot] = 0;
    this.free.push(slot);
  }

  terms(): IterableIterator<string> {
    return this.slotOf.keys();
  }

  /** The slots' arrays, and per term an estimate of its map entry and string. */
  bytes(): number {
    let b = this.ids.byteLength + this.text.byteLength + this.title.byteLength + this.n.byteLength;
    for (const term of this.slotOf.keys()) b += 2 * term.length + 48;
    return b;
  }

  private newSlot(): number {
    const free = this.free.pop();
    if (free !== undefined) return free;
    const slot = this.slots++;
    if (slot >= this.n.length) {
      // Grown by half, in this thread's memory: a query reads a term of the store through a list made for it.
      const slots = Math.ceil(this.n.length * 1.5);
      const more = <T extends Uint8Array | Uint16Array | Uint32Array>(a: T, b: T): T => (b.set(a), b);
      this.n = more(this.n, new Uint8Array(slots));
      this.ids = more(this.ids, new Uint32Array(CompactTerms.MAX * slots));
      this.text = more(this.text, new Uint16Array(CompactTerms.MAX * slots));
      this.title = more(this.title, new Uint16Array(CompactTerms.MAX * slots));
    }
    return slot;
  }
}
