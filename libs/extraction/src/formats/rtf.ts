/*
 * Over 150 lines: rtf-stream-parser only tokenizes, so the RTF reader itself (destinations, code pages,
 * \u fallbacks, paragraph styles) is written here; it is one state machine and reads best in one file.
 */
import { Tokenize } from 'rtf-stream-parser';
import { ExtractedDocument, ExtractedTable, ExtractionError, ExtractOptions } from '../extracted';
import { codepageOfCharset, decodeCodepage } from './shared/codepages';
import { Block, heading, paragraph, sectionsFromBlocks } from './shared/sections';
import { isBlankTable, RawCell, tableText, toExtractedTable } from './shared/tables';

/** The tokenizer's output (its TokenType is a const enum, which isolated-module builds cannot read). */
interface RtfToken {
  readonly type: 0 | 1 | 2 | 3;
  readonly word?: string;
  readonly param?: number;
  readonly data?: Buffer;
}
const GROUP_START = 0;
const GROUP_END = 1;
const CONTROL = 2;

type Destination = 'body' | 'skip' | 'fonttbl' | 'stylesheet' | 'info' | 'title' | 'author' | 'subject';

/** Destinations whose text is not the document's: tables of the file, pictures, headers/footers, field codes… */
const SKIPPED = new Set([
  'colortbl', 'pict', 'object', 'header', 'headerl', 'headerr', 'headerf', 'footer', 'footerl', 'footerr', 'footerf', 'footnote', 'fldinst',
  'listtable', 'listoverridetable', 'listtext', 'pntext', 'pntxta', 'pntxtb', 'pn', 'rsidtbl', 'generator', 'xmlnstbl', 'themedata',
  'colorschememapping', 'datastore', 'latentstyles', 'revtbl', 'filetbl', 'pgdsctbl', 'ftnsep', 'ftnsepc', 'aftnsep', 'aftnsepc', 'template',
  'docvar', 'shpinst', 'shppict', 'nonshppict', 'xe', 'tc', 'userprops', 'bkmkstart', 'bkmkend', 'operator', 'comment', 'annotation',
]);
const SYMBOLS: Readonly<Record<string, string>> = {
  line: '\n', tab: '\t', emdash: '—', endash: '–', emspace: ' ', enspace: ' ', qmspace: ' ', bullet: '•', lquote: '‘', rquote: '’',
  ldblquote: '“', rdblquote: '”', '~': '\u00a0', _: '\u2011', '-': '', '{': '{', '}': '}', '\\': '\\',
};
const PARAGRAPH_ENDS = new Set(['par', 'sect', 'page', '\n', '\r']);

interface Group {
  destination: Destination;
  uc: number;
  font?: number;
}

interface StyleEntry {
  number?: number;
  outline?: number;
  name: string;
}

/**
 * RTF → document. A paragraph in a "heading N" style (or with an outline level) starts a section; rows marked
 * \trhdr are table headers. Footnotes, headers/footers and field codes are left out.
 */
export async function parseRtf(file: Buffer, options: ExtractOptions): Promise<ExtractedDocument> {
  const tokens = await tokenize(file);
  if (tokens[0]?.type !== GROUP_START || tokens[1]?.type !== CONTROL || tokens[1].word !== 'rtf') {
    throw new ExtractionError('corrupt', 'The rtf file does not start with {\\rtf');
  }
  const reader = new RtfReader(options.extractTables);
  for (const token of tokens) reader.read(token);
  if (reader.depth !== 0) throw new ExtractionError('corrupt', 'The rtf file ends inside an open group (it is truncated)');
  reader.endParagraph();
  const metadata: Record<string, string> = {};
  if (reader.info.author.trim()) metadata.author = reader.info.author.trim();
  if (reader.info.subject.trim()) metadata.subject = reader.info.subject.trim();
  const title = reader.info.title.trim();
  return { ...(title ? { title } : {}), metadata, sections: sectionsFromBlocks(reader.blocks), tables: reader.tables };
}

async function tokenize(file: Buffer): Promise<RtfToken[]> {
  const tokenizer = new Tokenize();
  const tokens: RtfToken[] = [];
  tokenizer.on('data', (token: RtfToken) => tokens.push(token));
  await new Promise<void>((resolve, reject) => {
    tokenizer.on('end', resolve).on('error', (e) => reject(new ExtractionError('corrupt', `The rtf file cannot be tokenized: ${e.message}`)));
    tokenizer.end(file);
  });
  return tokens;
}

class RtfReader {
  readonly blocks: Block[] = [];
  readonly tables: ExtractedTable[] = [];
  readonly info = { title: '', author: '', subject: '' };
  private readonly groups: Group[] = [{ destination: 'body', uc: 1 }];
  private readonly fontCodepages = new Map<number, number>();
  private readonly styleLevels = new Map<number, number>();
  private ansiCodepage = 1252;
  private defaultFont = 0;
  private groupJustOpened = false;
  private optionalDestination = false;
  private fallbackToSkip = 0;
  private pendingBytes: Buffer[] = [];
  private text = '';
  private paragraphStyle = 0;
  private paragraphOutline: number | undefined;
  private fontEntry: number | undefined;
  private styleEntry: StyleEntry | undefined;
  private inTable = false;
  private headerRow = false;
  private cells: RawCell[] = [];
  private rows: { header: boolean; cells: RawCell[] }[] = [];

  constructor(private readonly extractTables: boolean) {}

  get depth(): number {
    return this.groups.length - 1;
  }

  private get group(): Group {
    return this.groups[this.groups.length - 1];
  }

  read(token: RtfToken): void {
    const opened = this.groupJustOpened;
    this.groupJustOpened = false;
    if (token.type === GROUP_START) {
      this.flushBytes();
      this.groups.push({ ...this.group });
      this.groupJustOpened = true;
      this.optionalDestination = false;
      this.fallbackToSkip = 0;
    } else if (token.type === GROUP_END) {
      this.flushBytes();
      this.closeGroup();
      this.fallbackToSkip = 0;
    } else if (token.type === CONTROL) {
      if (token.word === '*' && opened) {
        this.optionalDestination = true;
        this.groupJustOpened = true;
      } else if (token.word === "'") {
        if (this.group.destination === 'skip') return;
        if (this.fallbackToSkip > 0) this.fallbackToSkip--;
        else if (token.data) this.pendingBytes.push(token.data);
      } else {
        this.flushBytes();
        if (opened && this.openDestination(token.word ?? '')) return;
        this.control(token.word ?? '', token.param);
      }
    } else if (token.data && this.group.destination !== 'skip') {
      // Skipped groups (pictures, binary objects) are most of some files: their bytes are never decoded.
      const skip = Math.min(this.fallbackToSkip, token.data.length);
      this.fallbackToSkip -= skip;
      this.pendingBytes.push(token.data.subarray(skip));
    }
  }

  /** The first control word of a group may name its destination; `{\*\unknown …}` groups are skipped. */
  private openDestination(word: string): boolean {
    const outer = this.groups[this.groups.length - 2].destination;
    const inInfo = outer === 'info' && (word === 'title' || word === 'author' || word === 'subject');
    if (word === 'fonttbl' || word === 'stylesheet' || word === 'info') this.group.destination = word;
    else if (inInfo) this.group.destination = word;
    else if (this.optionalDestination || SKIPPED.has(word) || outer === 'info') this.group.destination = 'skip';
    else return false;
    return this.group.destination === 'skip';
  }

  private control(word: string, param: number | undefined): void {
    const group = this.group;
    if (group.destination === 'skip') return;
    if (word === 'u' && param !== undefined) {
      this.emit(String.fromCharCode(param < 0 ? param + 65536 : param));
      this.fallbackToSkip = group.uc;
      return;
    }
    if (this.fallbackToSkip > 0 && (word.length === 1 || SYMBOLS[word] !== undefined)) {
      this.fallbackToSkip--;
      return;
    }
    switch (word) {
      case 'uc':
        group.uc = param ?? 1;
        return;
      case 'ansicpg':
        this.ansiCodepage = param ?? 1252;
        return;
      case 'deff':
        this.defaultFont = param ?? 0;
        return;
      case 'f':
        if (group.destination === 'fonttbl') this.fontEntry = param;
        else group.font = param;
        return;
      case 'fcharset':
      case 'cpg': {
        const codepage = word === 'cpg' ? param : codepageOfCharset(param ?? 0);
        if (group.destination === 'fonttbl' && this.fontEntry !== undefined && codepage) this.fontCodepages.set(this.fontEntry, codepage);
        return;
      }
      case 'plain':
        group.font = undefined;
        return;
      case 'pard':
        this.paragraphStyle = 0;
        this.paragraphOutline = undefined;
        this.inTable = false;
        return;
      case 'intbl':
        this.inTable = true;
        return;
      case 'trowd':
        this.headerRow = false;
        return;
      case 'trhdr':
        this.headerRow = true;
        return;
      case 's':
        if (group.destination === 'stylesheet') this.styleEntry = { number: param ?? 0, name: '' };
        else if (group.destination === 'body') this.paragraphStyle = param ?? 0;
        return;
      case 'outlinelevel':
        if (group.destination === 'stylesheet' && this.styleEntry) this.styleEntry.outline = param;
        else if (group.destination === 'body') this.paragraphOutline = param;
        return;
    }
    if (group.destination !== 'body') return;
    if (word === 'cell' || word === 'nestcell') this.endCell();
    else if (word === 'row' || word === 'nestrow') this.endRow();
    else if (PARAGRAPH_ENDS.has(word) && this.inTable) this.emit(' ');
    else if (PARAGRAPH_ENDS.has(word)) this.endParagraph();
    else if (SYMBOLS[word] !== undefined) this.emit(SYMBOLS[word]);
  }

  private emit(text: string): void {
    const destination = this.group.destination;
    if (destination === 'body') this.text += text;
    else if (destination === 'title' || destination === 'author' || destination === 'subject') this.info[destination] += text;
    else if (destination === 'stylesheet' && this.styleEntry) this.styleEntry.name += text;
  }

  /** Bytes are decoded in runs: a double-byte code page character may be split over two \'hh escapes. */
  private flushBytes(): void {
    if (this.pendingBytes.length === 0) return;
    const font = this.group.font ?? this.defaultFont;
    const text = decodeCodepage(Buffer.concat(this.pendingBytes), this.fontCodepages.get(font) ?? this.ansiCodepage);
    this.pendingBytes = [];
    this.emit(text);
  }

  private closeGroup(): void {
    const closed = this.groups.pop();
    if (closed?.destination === 'stylesheet' && this.group.destination !== 'stylesheet') this.styleEntry = undefined;
    if (closed?.destination === 'stylesheet' && this.styleEntry && this.group.destination === 'stylesheet') this.endStyleEntry();
    if (this.groups.length === 0) this.groups.push({ destination: 'skip', uc: 1 });
  }

  /** A stylesheet entry's text is its name up to ";"; "heading N" styles (any case) are headings. */
  private endStyleEntry(): void {
    const entry = this.styleEntry;
    this.styleEntry = undefined;
    if (!entry || entry.number === undefined) return;
    const named = /^heading\s*(\d)/i.exec(entry.name.replace(/;.*$/s, '').trim());
    const level = named ? Number(named[1]) : entry.outline !== undefined ? entry.outline + 1 : undefined;
    if (level) this.styleLevels.set(entry.number, level);
  }

  private endCell(): void {
    this.flushBytes();
    this.cells.push({ text: this.text.replace(/\s+/g, ' ').trim() });
    this.text = '';
  }

  private endRow(): void {
    if (this.text.trim()) this.endCell();
    this.rows.push({ header: this.headerRow, cells: this.cells });
    this.cells = [];
    this.text = '';
  }

  /** A table ends at the first paragraph outside it; header rows are the leading \trhdr ones. */
  private endTable(): void {
    const leading = this.rows.findIndex((row) => !row.header);
    const split = leading < 0 ? this.rows.length : leading;
    const table = { headers: this.rows.slice(0, split).map((r) => r.cells), rows: this.rows.slice(split).map((r) => r.cells) };
    this.rows = [];
    if (isBlankTable(table)) return;
    if (this.extractTables) this.tables.push(toExtractedTable(table, `table_${this.tables.length + 1}`));
    else this.blocks.push(paragraph(tableText(table)));
  }

  endParagraph(): void {
    if (this.rows.length > 0) this.endTable();
    this.flushBytes();
    const text = this.text.trim();
    this.text = '';
    if (!text) return;
    const level = this.styleLevels.get(this.paragraphStyle) ?? (this.paragraphOutline !== undefined && this.paragraphOutline < 9 ? this.paragraphOutline + 1 : undefined);
    this.blocks.push(level ? heading(level, text.replace(/\n/g, ' ')) : paragraph(text));
  }
}
