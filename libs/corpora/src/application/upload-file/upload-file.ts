import { CommandBus, CommandHandler, ICommandHandler, QueryBus } from '@nestjs/cqrs';
import { ExtractedDocument, ExtractedSection, ExtractionError, ExtractionPool } from '@lib/extraction';
import { CommandContext, DomainError, invalid } from '@lib/platform';
import type { ChunkingStrategy } from '../../domain/chunking';
import type { DocumentTable, Metadata, StructuredDocumentInput, StructuredSectionInput } from '../../domain/document';
import { IndexDocument, IndexedDocument } from '../index-document/index-document';
import type { WriteResult } from '../write-result';
import { MAX_SUMMARISED_TABLES, SummarizeTables, TableGenerationSpec } from './summarize-tables';

/** Limits of an upload (spec: 10 MB per file); the document id is the file name (docs/corpora.md). */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
export const MAX_UPLOAD_ID_CHARS = 100;
const MAX_TITLE_CHARS = 255;

export class UploadFile {
  constructor(
    readonly corpusKey: string,
    readonly file: Buffer,
    readonly filename: string,
    readonly options: {
      readonly metadata: Metadata;
      readonly chunking?: ChunkingStrategy;
      readonly extractTables: boolean;
      /** Summarise each extracted table through a model; the summary becomes its description (docs/corpora.md). */
      readonly tableGeneration?: TableGenerationSpec;
    },
    readonly ctx: CommandContext,
  ) {}
}

export interface UploadResult {
  readonly input: StructuredDocumentInput;
  readonly indexed: IndexedDocument;
  /** Pages scanned for tables (the reference's `extraction_usage.table_extraction_used`): 0 unless asked for. */
  readonly tableExtractionPages: number;
}

/** A PDF's pages when tables were asked for; a file without pages counts as one. */
const tableExtractionPages = (doc: ExtractedDocument, asked: boolean): number => {
  if (!asked) return 0;
  const pages = doc.metadata.page_count;
  return typeof pages === 'number' && Number.isInteger(pages) && pages >= 0 ? pages : 1;
};

/** The file name as a document id: URL-encoded names are decoded; no slashes or control characters. */
export function uploadDocumentId(filename: string): string {
  let id = filename;
  if (/%[0-9A-Fa-f]{2}/.test(id)) {
    try {
      id = decodeURIComponent(id);
    } catch {
      /* not URL-encoded after all: keep it as sent */
    }
  }
  id = id.normalize('NFC').trim();
  const problem =
    id === '' ? 'is empty' : [...id].length > MAX_UPLOAD_ID_CHARS ? `is longer than ${MAX_UPLOAD_ID_CHARS} characters` : /[/\\\p{Cc}]/u.test(id) ? 'contains a slash, backslash or control character' : undefined;
  if (problem) throw invalid('upload.bad_filename', `The file name (the document id) ${problem}`, { filename: problem });
  return id;
}

const clip = (title: string | undefined): string | undefined => {
  const t = title?.replace(/\s+/g, ' ').trim();
  return t ? [...t].slice(0, MAX_TITLE_CHARS).join('') : undefined;
};

function sectionsOf(sections: readonly ExtractedSection[]): StructuredSectionInput[] {
  return sections.map((s) => ({ title: clip(s.title), text: s.text, ...(s.sections?.length ? { sections: sectionsOf(s.sections) } : {}) }));
}

/** A parsed file as a structured document: the file's own metadata under the caller's. */
export function documentFromFile(id: string, doc: ExtractedDocument, options: UploadFile['options']): StructuredDocumentInput {
  const tables: DocumentTable[] = doc.tables.map((t) => ({ id: t.id, ...(t.title ? { title: clip(t.title) } : {}), data: { headers: t.headers, rows: t.rows } }));
  return {
    type: 'structured',
    id,
    title: clip(doc.title),
    metadata: { ...doc.metadata, ...options.metadata },
    sections: sectionsOf(doc.sections),
    chunking: options.chunking,
    ...(tables.length ? { tables } : {}),
  };
}

@CommandHandler(UploadFile)
export class UploadFileHandler implements ICommandHandler<UploadFile, WriteResult<UploadResult>> {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly extraction: ExtractionPool,
  ) {}

  async execute(cmd: UploadFile): Promise<WriteResult<UploadResult>> {
    const id = uploadDocumentId(cmd.filename);
    if (cmd.file.length > MAX_UPLOAD_BYTES) throw new DomainError('too_large', 'upload.too_large', `The file is larger than ${MAX_UPLOAD_BYTES} bytes`);
    let parsed: ExtractedDocument;
    try {
      // Parsed on the extraction pool: a large file does not stall other requests (docs/extraction.md).
      parsed = await this.extraction.extract(cmd.file, id, { extractTables: cmd.options.extractTables });
    } catch (e) {
      if (!(e instanceof ExtractionError)) throw e;
      if (e.kind === 'unsupported') throw new DomainError('unsupported_media', 'upload.unsupported_type', e.message);
      // Past a parser limit (docs/security.md): the file is refused as too costly, not as unreadable.
      if (e.kind === 'too_large') throw new DomainError('too_large', 'upload.file_too_large', e.message, { fieldErrors: { file: e.message } });
      if (e.kind === 'timeout') throw new DomainError('unprocessable', 'upload.parse_timeout', e.message, { fieldErrors: { file: e.message } });
      throw invalid(`upload.${e.kind}_file`, e.message, { file: e.message });
    }
    const input = await this.withTableSummaries(documentFromFile(id, parsed, cmd.options), cmd);
    try {
      const result: WriteResult<IndexedDocument> = await this.commands.execute(new IndexDocument(cmd.corpusKey, input, 'searchable', cmd.ctx));
      return { value: { input, indexed: result.value, tableExtractionPages: tableExtractionPages(parsed, cmd.options.extractTables) }, position: result.position, visible: result.visible };
    } catch (e) {
      // The reference API answers an upload onto an existing document id with 409.
      if (e instanceof DomainError && e.code === 'document.id_taken') throw new DomainError('conflict', e.code, e.message);
      throw e;
    }
  }

  /** Each table described by the model's summary, which its first part then carries (tableTexts). */
  private async withTableSummaries(input: StructuredDocumentInput, cmd: UploadFile): Promise<StructuredDocumentInput> {
    const spec = cmd.options.tableGeneration;
    if (!spec || !input.tables?.length) return input;
    if (input.tables.length > MAX_SUMMARISED_TABLES) {
      const why = `the file has ${input.tables.length} tables; at most ${MAX_SUMMARISED_TABLES} can be summarised by a model in one upload`;
      throw invalid('upload.too_many_tables', `Invalid table_extraction_config.generation: ${why}`, { 'table_extraction_config.generation': why });
    }
    const summaries: string[] = await this.queries.execute(new SummarizeTables(input.tables, spec, cmd.ctx));
    return { ...input, tables: input.tables.map((t, i) => (summaries[i]?.trim() ? { ...t, description: summaries[i].trim() } : t)) };
  }
}
