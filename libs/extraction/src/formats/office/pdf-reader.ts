import type { Output, PDFParser as Pdf2JsonParser, Text } from 'pdf2json';
import { ExtractionError } from '../../extracted';
import { EXTRACTION_LIMITS, tooLarge } from '../../limits';

/** A run of text as pdf2json places it, in its page units (top-left origin, y downwards). */
export interface PdfRun {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  /** Font size in page units. */
  readonly size: number;
  readonly text: string;
}

export interface PdfContent {
  /** The PDF info dictionary (Title, Author, …). */
  readonly info: Readonly<Record<string, unknown>>;
  readonly pages: readonly (readonly PdfRun[])[];
}

/**
 * pdf2json renders pages at scale 1.5 and divides by 24 to get its units (PDFUnit.toFormX), so one PDF point is
 * 1/16 unit. A run's width (Text.w) comes in text-space points: exact for the usual producers, which set the
 * font size with Tf rather than by scaling the text matrix.
 */
const UNITS_PER_POINT = 1.5 / 24;

/** Long enough for a 10 MB upload (the reference API's limit), short enough that a file pdf.js loops on fails. */
export const PDF_TIMEOUT_MS = 30_000;

let parserClass: typeof Pdf2JsonParser | undefined;

function pdf2json(): typeof Pdf2JsonParser {
  // pdf2json reads PDF2JSON_DISABLE_LOGS once, when loaded (hence require here, not import): without it its
  // pdf.js prints "Warning: Setting up fake worker." and every parse error to stdout. An explicit setting wins.
  process.env.PDF2JSON_DISABLE_LOGS ??= '1';
  parserClass ??= (require('pdf2json') as typeof Pdf2JsonParser);
  return parserClass;
}

/** Text runs and info of every page; a file pdf2json cannot read, or that takes longer than timeoutMs, is corrupt. */
export function readPdf(file: Buffer, timeoutMs = PDF_TIMEOUT_MS): Promise<PdfContent> {
  if (file.length === 0) return Promise.reject(new ExtractionError('corrupt', 'The pdf file is empty'));
  // pdf2json re-wraps a Buffer that does not span its whole ArrayBuffer as Buffer.from(buffer, 0, byteLength),
  // dropping byteOffset: a slice of Node's shared pool (any small file read by fs) would be parsed from the
  // wrong bytes. Buffer.alloc never uses the pool, so the copy owns its memory from offset 0.
  const own = Buffer.alloc(file.length);
  file.copy(own);
  const PDFParser = pdf2json();
  const parser = new PDFParser(null, false);
  return new Promise<PdfContent>((resolve, reject) => {
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      parser.removeAllListeners();
      parser.destroy();
      outcome();
    };
    const corrupt = (reason: string) => settle(() => reject(new ExtractionError('corrupt', `The pdf file could not be read: ${reason}`)));
    const timer = setTimeout(() => corrupt(`parsing took longer than ${timeoutMs} ms`), timeoutMs);
    parser.on('pdfParser_dataError', (error) => corrupt(errorMessage(error)));
    // pdf2json announces each page as it is laid out: a page bomb (a small page tree naming one page thousands of
    // times) is refused at the first page past the limit rather than after all of them.
    let pages = 0;
    parser.on('data', (page: unknown) => {
      if (page && ++pages > EXTRACTION_LIMITS.maxPages) settle(() => reject(tooLarge(`The pdf file has more than ${EXTRACTION_LIMITS.maxPages} pages`)));
    });
    parser.on('pdfParser_dataReady', (data) => settle(() => resolve(toContent(data))));
    try {
      parser.parseBuffer(own);
    } catch (error) {
      corrupt(errorMessage(error));
    }
  });
}

function errorMessage(error: unknown): string {
  const inner = error !== null && typeof error === 'object' && 'parserError' in error ? error.parserError : error;
  return inner instanceof Error ? inner.message : String(inner);
}

function toContent(data: Output): PdfContent {
  const { Metadata: _xmp, ...info } = data.Meta ?? {};
  return { info, pages: (data.Pages ?? []).map((page) => page.Texts.map(toRun).filter((run) => run.text.trim() !== '')) };
}

function toRun(text: Text): PdfRun {
  return {
    x: text.x,
    y: text.y,
    width: text.w * UNITS_PER_POINT,
    size: Math.max(...text.R.map((run) => run.TS[1])) * UNITS_PER_POINT,
    text: text.R.map((run) => decodeRunText(run.T)).join(''),
  };
}

/** pdf2json URI-encodes run text; a lone "%" it failed to encode is kept as it is rather than failing the file. */
function decodeRunText(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}
