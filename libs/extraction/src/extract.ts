import { ExtractedDocument, ExtractedSection, ExtractionError, ExtractOptions, FormatParser } from './extracted';
import { parseDoc } from './formats/doc';
import { parseDocx } from './formats/docx';
import { parseEmail } from './formats/email';
import { parseEpub } from './formats/epub';
import { parseHtml } from './formats/html';
import { parseMarkdown } from './formats/markdown';
import { parseOdt } from './formats/odt';
import { parsePdf } from './formats/pdf';
import { parsePpt } from './formats/ppt';
import { parsePptx } from './formats/pptx';
import { parseRtf } from './formats/rtf';
import { parseText } from './formats/text';

/** The formats the upload endpoint accepts, by file extension (lower case, without the dot). */
export const PARSERS: Readonly<Record<string, FormatParser>> = {
  txt: parseText,
  md: parseMarkdown,
  markdown: parseMarkdown,
  html: parseHtml,
  htm: parseHtml,
  lxml: parseHtml,
  pdf: parsePdf,
  doc: parseDoc,
  docx: parseDocx,
  odt: parseOdt,
  ppt: parsePpt,
  pptx: parsePptx,
  rtf: parseRtf,
  epub: parseEpub,
  eml: parseEmail,
};

export const SUPPORTED_EXTENSIONS = Object.keys(PARSERS);

/** The format of a file: its extension, else what its first bytes say (an RFC 822 message has no fixed extension). */
export function formatOf(filename: string, file: Buffer): string | undefined {
  const dot = filename.lastIndexOf('.');
  const ext = dot >= 0 ? filename.slice(dot + 1).toLowerCase() : '';
  if (PARSERS[ext]) return ext;
  if (looksLikeEmail(file)) return 'eml';
  return undefined;
}

/** Header lines "Name: value" up to a blank line, with at least From/To/Subject/Date/Message-ID among them. */
function looksLikeEmail(file: Buffer): boolean {
  const head = file.subarray(0, 4096).toString('latin1');
  const end = head.search(/\r?\n\r?\n/);
  if (end <= 0) return false;
  const lines = head.slice(0, end).split(/\r?\n/);
  if (!lines.every((l) => /^[!-9;-~]+:/.test(l) || /^[ \t]/.test(l))) return false;
  return lines.some((l) => /^(from|to|subject|date|message-id|received|mime-version):/i.test(l));
}

const hasText = (sections: readonly ExtractedSection[]): boolean => sections.some((s) => s.text.trim() !== '' || hasText(s.sections ?? []));

/** Parses a file into its document structure; throws ExtractionError for an unsupported, corrupt or empty file. */
export async function extract(file: Buffer, filename: string, options: ExtractOptions): Promise<ExtractedDocument> {
  const format = formatOf(filename, file);
  if (!format) {
    throw new ExtractionError('unsupported', `Files of this type cannot be parsed ("${filename}"); supported: ${SUPPORTED_EXTENSIONS.join(', ')} and RFC 822 e-mail`);
  }
  let doc: ExtractedDocument;
  try {
    doc = await PARSERS[format](file, options);
  } catch (e) {
    if (e instanceof ExtractionError) throw e;
    throw new ExtractionError('corrupt', `The file could not be read as ${format}: ${(e as Error).message ?? String(e)}`);
  }
  if (!hasText(doc.sections) && doc.tables.length === 0) throw new ExtractionError('empty', `No text could be extracted from the ${format} file`);
  return doc;
}
