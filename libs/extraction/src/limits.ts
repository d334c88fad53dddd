import { ExtractionError } from './extracted';

/**
 * Bounds on what one uploaded file may cost its parser (issue 22: a 1 MB docx inflating to 1 GB, a 1.8 KB PDF of
 * 10,000 shared pages). docs/security.md lists them. Fixed here rather than configured: they bound the 10 MB
 * upload limit's worst case, and a legitimate file of 10 MB stays well inside them.
 */
export const EXTRACTION_LIMITS = {
  /** Bytes all members of a zip container (docx, pptx, odt, epub) may inflate to, together. */
  maxInflatedBytes: 100 * 1024 * 1024,
  /** Bytes one member may inflate to. */
  maxInflatedEntryBytes: 50 * 1024 * 1024,
  /** Pages of a PDF, slides of a pptx or ppt deck. */
  maxPages: 2_000,
} as const;

/** A file past one of the bounds: refused as too large (413) rather than as unreadable. */
export const tooLarge = (message: string): ExtractionError => new ExtractionError('too_large', message);

/** Throws once a document has more pages (or slides) than allowed. */
export function checkPageCount(count: number, what: 'pages' | 'slides', format: string): void {
  if (count > EXTRACTION_LIMITS.maxPages) throw tooLarge(`The ${format} file has more than ${EXTRACTION_LIMITS.maxPages} ${what}`);
}
