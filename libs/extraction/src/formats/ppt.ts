import { find, read } from 'cfb';
import { checkPageCount } from '../limits';
import { ExtractedSection, ExtractionError, FormatParser } from '../extracted';
import { childRecords, descendantRecords, MalformedPptError, PptRecord, readPersistDirectory, readRecord } from './office/ppt-records';

const DOCUMENT_CONTAINER = 0x03e8;
const SLIDE_CONTAINER = 0x03ee;
const SLIDE_LIST_WITH_TEXT = 0x0ff0;
const SLIDE_PERSIST_ATOM = 0x03f3;
const TEXT_HEADER_ATOM = 0x0f9f;
const TEXT_CHARS_ATOM = 0x0fa0;
const TEXT_BYTES_ATOM = 0x0fa8;
/** SlideListWithText instance 0 lists the slides (1 the masters, 2 the notes pages). */
const SLIDE_LIST = 0;
/** TextTypeEnum ([MS-PPT] 2.13.33): Tx_TYPE_TITLE and Tx_TYPE_CENTERTITLE; 5 is the title slide's subtitle. */
const TITLE_TEXT_TYPES = new Set([0, 6]);
const NOTES_TEXT_TYPE = 2;
const OTHER_TEXT_TYPE = 4;

interface TextBlock {
  readonly textType: number;
  readonly text: string;
}

/**
 * PowerPoint 97–2003 decks: one section per slide in presentation order, titled by its title placeholder.
 * A slide's text lives in two places: PowerPoint keeps placeholder text in the document's SlideListWithText
 * (the slide's shapes only refer to it), while text boxes — and everything LibreOffice writes — sit in the
 * slide's own drawing. Both are read. Notes pages and masters are not. The record walk is hand-written (see
 * office/ppt-records.ts): no maintained npm parser for PowerPoint 97 exists. Slide tables are shape groups in
 * this format, so their cells stay text, and the document title (in the SummaryInformation property set) is not read.
 */
export const parsePpt: FormatParser = async (file) => {
  const { stream, currentUser } = openStreams(file);
  try {
    const directory = readPersistDirectory(stream, currentUser);
    const document = persistRecord(stream, directory.offsets, directory.documentPersistId, DOCUMENT_CONTAINER);
    const outlines = slideOutlines(document);
    checkPageCount(outlines.length, 'slides', 'ppt');
    const sections = outlines.map(({ persistId, outline }): ExtractedSection => {
      const slide = persistRecord(stream, directory.offsets, persistId, SLIDE_CONTAINER);
      return toSection([...outline, ...textBlocks(descendantRecords(slide))]);
    });
    return { metadata: { slide_count: sections.length }, sections, tables: [] };
  } catch (e) {
    if (e instanceof MalformedPptError) throw new ExtractionError('corrupt', `The ppt file's PowerPoint Document stream is damaged: ${e.message}`);
    throw e;
  }
};

function openStreams(file: Buffer): { stream: Buffer; currentUser: Buffer } {
  let container;
  try {
    container = read(file, { type: 'buffer' });
  } catch (e) {
    throw new ExtractionError('corrupt', `The ppt file is not a readable compound file: ${(e as Error).message}`);
  }
  const stream = find(container, 'PowerPoint Document');
  const currentUser = find(container, 'Current User');
  if (!stream || !currentUser) throw new ExtractionError('corrupt', 'The ppt file has no PowerPoint Document stream: it is not a PowerPoint 97–2003 deck');
  return { stream: Buffer.from(stream.content), currentUser: Buffer.from(currentUser.content) };
}

function persistRecord(stream: Buffer, offsets: ReadonlyMap<number, number>, persistId: number, type: number): PptRecord {
  const offset = offsets.get(persistId);
  if (offset === undefined) throw new MalformedPptError(`persist object ${persistId} is not in the persist directory`);
  const record = readRecord(stream, offset);
  if (record.type !== type || !record.isContainer) throw new MalformedPptError(`persist object ${persistId} is not a 0x${type.toString(16)} container`);
  return record;
}

/** The slides in order, each with the placeholder text the slide list holds for it (SlidePersistAtom starts a slide). */
function slideOutlines(document: PptRecord): { persistId: number; outline: TextBlock[] }[] {
  const list = childRecords(document).find((r) => r.type === SLIDE_LIST_WITH_TEXT && r.instance === SLIDE_LIST);
  const slides: { persistId: number; records: PptRecord[] }[] = [];
  for (const record of list ? childRecords(list) : []) {
    if (record.type === SLIDE_PERSIST_ATOM && record.body.length >= 4) slides.push({ persistId: record.body.readUInt32LE(0), records: [] });
    else slides.at(-1)?.records.push(record);
  }
  return slides.map(({ persistId, records }) => ({ persistId, outline: textBlocks(records) }));
}

/** Text atoms with the text type of the TextHeaderAtom before them. */
function textBlocks(records: Iterable<PptRecord>): TextBlock[] {
  const blocks: TextBlock[] = [];
  let textType = OTHER_TEXT_TYPE;
  for (const record of records) {
    if (record.type === TEXT_HEADER_ATOM && record.body.length >= 4) textType = record.body.readUInt32LE(0);
    else if (record.type === TEXT_CHARS_ATOM) blocks.push({ textType, text: record.body.toString('utf16le') });
    // TextBytesAtom holds the low bytes of UTF-16 code units, i.e. Latin-1.
    else if (record.type === TEXT_BYTES_ATOM) blocks.push({ textType, text: record.body.toString('latin1') });
  }
  return blocks;
}

/** Paragraphs end in CR; a vertical tab is a line break inside one. */
const paragraphsOf = (text: string): string[] =>
  text
    .split('\r')
    .map((p) => p.replace(/\v/g, '\n').replace(/[ \t]+/g, ' ').trim())
    .filter((p) => p !== '');

function toSection(blocks: readonly TextBlock[]): ExtractedSection {
  const titleBlock = blocks.find((b) => TITLE_TEXT_TYPES.has(b.textType));
  const title = titleBlock ? paragraphsOf(titleBlock.text).join(' ') : '';
  const body = blocks.filter((b) => b !== titleBlock && b.textType !== NOTES_TEXT_TYPE).flatMap((b) => paragraphsOf(b.text));
  return { ...(title ? { title } : {}), text: body.join('\n\n') };
}
