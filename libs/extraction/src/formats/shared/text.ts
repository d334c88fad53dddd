import { TextDecoder } from 'util';
import { ExtractionError } from '../../extracted';
import { decodeCharset, decodeCodepage } from './codepages';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes a file that claims to be text: a UTF-8/UTF-16 byte order mark wins, else strict UTF-8, else the
 * charset the file declares (HTML/XML), else windows-1252 (the usual encoding of old "ANSI" files; every byte
 * sequence decodes). Throws corrupt when the result is binary rather than text.
 */
export function decodeText(file: Buffer, format: string, declaredCharset?: string): string {
  let text: string;
  if (file[0] === 0xef && file[1] === 0xbb && file[2] === 0xbf) text = UTF8.decode(file.subarray(3));
  else if (file[0] === 0xff && file[1] === 0xfe) text = new TextDecoder('utf-16le').decode(file.subarray(2));
  else if (file[0] === 0xfe && file[1] === 0xff) text = new TextDecoder('utf-16be').decode(file.subarray(2));
  else {
    try {
      text = UTF8.decode(file);
    } catch {
      text = (declaredCharset && decodeCharset(file, declaredCharset)) || decodeCodepage(file, 1252);
    }
  }
  assertLooksLikeText(text, format);
  return text;
}

/** Control characters other than tab, line feed, form feed and carriage return, and U+FFFD. */
const NON_TEXT = /[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufffd]/g;

/**
 * Text files never hold NUL, and hold control characters only by accident; binary data renamed to .txt holds
 * many (about one byte in eight of random data). One in twenty is the line drawn between the two.
 */
function assertLooksLikeText(text: string, format: string): void {
  if (text.includes('\0')) throw new ExtractionError('corrupt', `The ${format} file holds binary data (NUL bytes), not text`);
  const nonText = text.match(NON_TEXT)?.length ?? 0;
  if (nonText > 0 && nonText / text.length > 0.05) {
    throw new ExtractionError('corrupt', `The ${format} file is mostly binary data, not text`);
  }
}

/** The same test on raw bytes, for formats that mix encodings (e-mail): only ASCII control bytes count. */
export function assertLooksLikeTextBytes(file: Buffer, format: string): void {
  let controls = 0;
  for (const byte of file) {
    if (byte === 0) throw new ExtractionError('corrupt', `The ${format} file holds binary data (NUL bytes), not text`);
    if (byte < 0x09 || byte === 0x0b || (byte > 0x0d && byte < 0x20) || byte === 0x7f) controls++;
  }
  if (controls > 0 && controls / file.length > 0.05) throw new ExtractionError('corrupt', `The ${format} file is mostly binary data, not text`);
}

/** Collapses runs of white space (as HTML and ODF render them) to one space. */
export const collapseWhitespace = (text: string): string => text.replace(/[ \t\n\r\f]+/g, ' ').trim();

/** Splits plain text into paragraphs at blank lines; line breaks inside a paragraph are kept. */
export function splitParagraphs(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t\f\v]*\n/)
    .map((p) =>
      p
        .split('\n')
        .map((line) => line.trimEnd())
        .join('\n')
        .replace(/^\n+|\n+$/g, ''),
    )
    .filter((p) => p.trim() !== '');
}
