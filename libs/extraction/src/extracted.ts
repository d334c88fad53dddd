/**
 * What a file parser produces: the document's structure as the format has it (titles, nested sections,
 * tables), before chunking. The corpora library turns it into a structured document (sections → parts by
 * the chosen chunking strategy; tables → table parts) and indexes it like any other document.
 */

/** One table cell, typed as the reference API's table data: exactly one value field. */
export type TableCell =
  | { readonly text_value: string; readonly colspan?: number }
  | { readonly int_value: number; readonly colspan?: number }
  | { readonly float_value: number; readonly colspan?: number }
  | { readonly bool_value: boolean; readonly colspan?: number };

export interface ExtractedTable {
  /** Unique within the document, e.g. `table_1`, in document order. */
  readonly id: string;
  readonly title?: string;
  /** Header rows (usually one); empty when the table has none. */
  readonly headers: readonly (readonly TableCell[])[];
  readonly rows: readonly (readonly TableCell[])[];
}

export interface ExtractedSection {
  /** Heading, slide title, chapter title, e-mail subject; absent when the format has none here. */
  readonly title?: string;
  /** Body text of the section (paragraphs joined by "\n\n"), without the text of nested sections. */
  readonly text: string;
  readonly sections?: readonly ExtractedSection[];
}

export interface ExtractedDocument {
  /** Document title where the format carries one (docx/odt/epub/pptx core properties, HTML <title>, e-mail subject). */
  readonly title?: string;
  /** Metadata the file itself carries (author, e-mail headers, page count…), merged under the caller's metadata. */
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly sections: readonly ExtractedSection[];
  /** Tables, only when `extractTables` was asked for (and the format has them); their text is then not repeated in sections. */
  readonly tables: readonly ExtractedTable[];
}

export interface ExtractOptions {
  readonly extractTables: boolean;
}

/**
 * Why a file could not be turned into a document. `unsupported` → 415; `corrupt` and `empty` → 400; `too_large`
 * (past a limit of limits.ts: inflated size, pages) → 413; `timeout` (the parse outran the time limit) → 422.
 */
export type ExtractionErrorKind = 'unsupported' | 'corrupt' | 'empty' | 'too_large' | 'timeout';

export class ExtractionError extends Error {
  constructor(
    readonly kind: ExtractionErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ExtractionError';
  }
}

/** A parser for one format. It must throw ExtractionError('corrupt', …) for a file it cannot read, never return an empty document for one. */
export type FormatParser = (file: Buffer, options: ExtractOptions) => Promise<ExtractedDocument>;
