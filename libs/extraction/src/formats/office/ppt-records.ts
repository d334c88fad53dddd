/**
 * The record layer of a PowerPoint 97–2003 "PowerPoint Document" stream ([MS-PPT] 2.3): every record is an
 * 8-byte header (recVer/recInstance, recType, recLen, little-endian) and a body; containers (recVer 0xF)
 * hold further records. No maintained npm parser for PowerPoint 97 exists, which is why this is written by
 * hand; the compound-file layer around it is the `cfb` package's.
 */
export interface PptRecord {
  readonly type: number;
  readonly instance: number;
  readonly isContainer: boolean;
  /** Offset of the record header in the stream. */
  readonly offset: number;
  /** The body, without the header. */
  readonly body: Buffer;
}

export class MalformedPptError extends Error {}

const HEADER = 8;

export function readRecord(stream: Buffer, offset: number): PptRecord {
  if (offset < 0 || offset + HEADER > stream.length) throw new MalformedPptError(`record header at ${offset} lies outside the stream`);
  const verAndInstance = stream.readUInt16LE(offset);
  const length = stream.readUInt32LE(offset + 4);
  if (offset + HEADER + length > stream.length) throw new MalformedPptError(`record at ${offset} runs past the end of the stream`);
  return {
    type: stream.readUInt16LE(offset + 2),
    instance: verAndInstance >> 4,
    isContainer: (verAndInstance & 0xf) === 0xf,
    offset,
    body: stream.subarray(offset + HEADER, offset + HEADER + length),
  };
}

/** The records directly inside a container, in order. */
export function childRecords(container: PptRecord): PptRecord[] {
  const records: PptRecord[] = [];
  for (let offset = 0; offset < container.body.length; ) {
    const record = readRecord(container.body, offset);
    records.push(record);
    offset += HEADER + record.body.length;
  }
  return records;
}

/** Every record inside a container, depth first in stream order. */
export function* descendantRecords(container: PptRecord): Generator<PptRecord> {
  for (const record of childRecords(container)) {
    yield record;
    if (record.isContainer) yield* descendantRecords(record);
  }
}

const USER_EDIT_ATOM = 0x0ff5;
const PERSIST_DIRECTORY_ATOM = 0x1772;

export interface PersistDirectory {
  /** Stream offset of each persist object (slides, the document container…) by persist id. */
  readonly offsets: ReadonlyMap<number, number>;
  /** Persist id of the DocumentContainer in the newest edit. */
  readonly documentPersistId: number;
}

/**
 * Follows the chain of UserEditAtoms from the one the "Current User" stream points at back to the first
 * save ([MS-PPT] 2.3.2–2.3.4): an incrementally saved file appends edits, and the newest entry of a persist
 * id wins.
 */
export function readPersistDirectory(stream: Buffer, currentUser: Buffer): PersistDirectory {
  if (currentUser.length < 20) throw new MalformedPptError('the Current User stream is too short');
  const offsets = new Map<number, number>();
  let editOffset = currentUser.readUInt32LE(16);
  let documentPersistId: number | undefined;
  const seen = new Set<number>();
  while (!seen.has(editOffset)) {
    seen.add(editOffset);
    const edit = readRecord(stream, editOffset);
    if (edit.type !== USER_EDIT_ATOM || edit.body.length < 20) throw new MalformedPptError(`no UserEditAtom at ${editOffset}`);
    documentPersistId ??= edit.body.readUInt32LE(16);
    readDirectoryEntries(readRecord(stream, edit.body.readUInt32LE(12)), offsets);
    const previous = edit.body.readUInt32LE(8);
    if (previous === 0) break;
    editOffset = previous;
  }
  if (documentPersistId === undefined) throw new MalformedPptError('no document in the persist directory');
  return { offsets, documentPersistId };
}

function readDirectoryEntries(directory: PptRecord, offsets: Map<number, number>): void {
  if (directory.type !== PERSIST_DIRECTORY_ATOM) throw new MalformedPptError(`no PersistDirectoryAtom at ${directory.offset}`);
  const body = directory.body;
  for (let at = 0; at + 4 <= body.length; ) {
    const entry = body.readUInt32LE(at);
    const firstId = entry & 0xfffff;
    const count = entry >>> 20;
    at += 4;
    if (at + count * 4 > body.length) throw new MalformedPptError('the persist directory is truncated');
    for (let i = 0; i < count; i++, at += 4) {
      if (!offsets.has(firstId + i)) offsets.set(firstId + i, body.readUInt32LE(at));
    }
  }
}
