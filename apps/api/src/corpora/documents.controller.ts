import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import {
  DeleteDocument,
  DocumentInput,
  documentView,
  GetDocument,
  GetImage,
  IndexDocument,
  IndexedDocument,
  ListDocuments,
  MAX_BULK_DOCUMENT_IDS,
  QueuedJob,
  QueueBulkDelete,
  QueueBulkMetadataUpdate,
  StructuredSectionInput,
  UpdateDocumentMetadata,
  waitForJob,
  WriteResult,
} from '@lib/corpora';
import { CommandContext, DomainError, invalid, READ_STORE, ReadStore } from '@lib/platform';
import { BodyLimit } from '../http/body-limit';
import { Policy } from '../http/policy';
import { Ctx } from '../http/command-context';
import { validateBody, validateBodyInSlices } from '../http/validation';
import { statusFor } from '../http/write-status';
import { toImage, toTable } from './attachment.dto';
import { BulkMetadataDto, CoreDocumentDto, MetadataDto, SectionDto, StructuredDocumentDto } from './document.dto';
import { pageLimit } from '../http/paging';
import { OpenApi } from '../openapi/openapi.decorator';

/**
 * A section's `id` becomes part metadata `section_id` ("converted to a metadata field automatically", the
 * reference), unless the section's own metadata already sets it.
 */
function sectionsOf(sections: SectionDto[]): StructuredSectionInput[] {
  return sections.map((s) => ({
    title: s.title,
    text: s.text,
    metadata: s.id !== undefined && s.metadata?.section_id === undefined ? { ...(s.metadata ?? {}), section_id: s.id } : s.metadata,
    sections: s.sections ? sectionsOf(s.sections) : undefined,
    tables: s.tables?.map(toTable),
    images: s.images?.map(toImage),
  }));
}

/**
 * Fields the reference accepts that this service cannot honour are refused, naming the field, rather than
 * dropped: custom dimensions (no corpus has any) and image-only matching (parts are matched by their text).
 */
function refuseUnsupported(dto: { custom_dimensions?: Record<string, number>; document_parts?: { custom_dimensions?: Record<string, number>; image_part_mode?: string }[] }): void {
  const errors: Record<string, string> = {};
  if (dto.custom_dimensions && Object.keys(dto.custom_dimensions).length) errors.custom_dimensions = 'custom dimensions are not supported: corpora here have none';
  for (const [i, p] of (dto.document_parts ?? []).entries()) {
    if (p.custom_dimensions && Object.keys(p.custom_dimensions).length) errors[`document_parts[${i}].custom_dimensions`] = 'custom dimensions are not supported: corpora here have none';
    // `image` would match by visual similarity alone, which needs image embeddings this service does not make;
    // `image_and_text` keeps its text half (the part is matched by its text), documented in docs/corpora.md.
    if (p.image_part_mode === 'image') errors[`document_parts[${i}].image_part_mode`] = 'image matching needs image embeddings, which are not available: use text or image_and_text (matched by its text)';
  }
  const first = Object.entries(errors)[0];
  if (first) throw invalid('document.unsupported_field', `Invalid ${first[0]}: ${first[1]}`, errors);
}

async function toInput(body: unknown): Promise<DocumentInput> {
  const type = (body as { type?: unknown } | null)?.type;
  if (type === 'core') {
    const dto = await validateBodyInSlices(CoreDocumentDto, body);
    refuseUnsupported(dto);
    return {
      type: 'core',
      id: dto.id,
      metadata: dto.metadata ?? {},
      parts: dto.document_parts.map((p) => ({ text: p.text, metadata: p.metadata, context: p.context, tableId: p.table_id, imageId: p.image_id })),
      tables: dto.tables?.map(toTable),
      images: dto.images?.map(toImage),
    };
  }
  if (type === 'structured') {
    const dto = await validateBodyInSlices(StructuredDocumentDto, body);
    refuseUnsupported(dto);
    const c = dto.chunking_strategy;
    return {
      type: 'structured',
      id: dto.id,
      title: dto.title,
      description: dto.description,
      metadata: dto.metadata ?? {},
      sections: sectionsOf(dto.sections),
      tables: dto.tables?.map(toTable),
      images: dto.images?.map(toImage),
      chunking: c ? (c.type === 'max_chars_chunking_strategy' ? { type: c.type, maxCharsPerChunk: c.max_chars_per_chunk! } : { type: c.type }) : undefined,
    };
  }
  throw invalid('request.invalid', 'type must be "core" or "structured"', { type: 'must be "core" or "structured"' });
}

/** `Request-Timeout` (seconds) or `Request-Timeout-Millis` (wins); default 5 minutes. */
function requestTimeoutMs(seconds: string | undefined, millis: string | undefined): number {
  const parse = (raw: string | undefined, name: string, scale: number) => {
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw invalid('request.invalid', `${name} must be a positive integer`, { [name]: 'must be a positive integer' });
    return n * scale;
  };
  return parse(millis, 'Request-Timeout-Millis', 1) ?? parse(seconds, 'Request-Timeout', 1000) ?? 300_000;
}

@Controller('v2/corpora/:corpus_key/documents')
export class DocumentsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  @OpenApi({ body: [CoreDocumentDto, StructuredDocumentDto], statuses: [202] })
  @Post()
  @BodyLimit(50) // a structured document of 100,000 sections
  @Policy('corpus.write')
  async index(
    @Param('corpus_key') corpusKey: string,
    @Body() body: unknown,
    @Query('wait_for') waitFor: string | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) res: Response,
  ) {
    if (waitFor !== undefined && waitFor !== 'searchable' && waitFor !== 'indexed') {
      throw invalid('request.invalid', 'wait_for must be "searchable" or "indexed"', { wait_for: 'must be "searchable" or "indexed"' });
    }
    const input = await toInput(body);
    const result: WriteResult<IndexedDocument> = await this.commands.execute(new IndexDocument(corpusKey, input, waitFor === 'indexed' ? 'indexed' : 'searchable', ctx));
    statusFor(result, 201, res);
    // Built from the appended event, so `wait_for=indexed` answers the same document; nothing was extracted from a file.
    return { ...documentView(result.value.row), extraction_usage: { table_extraction_used: 0 } };
  }

  @Get()
  @Policy('corpus.read')
  async list(@Param('corpus_key') corpusKey: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('metadata_filter') filter?: string) {
    return this.queries.execute(new ListDocuments(corpusKey, pageLimit(limit, 10, 1000), pageKey, filter));
  }

  /**
   * Bulk metadata update (docs/corpora.md): a job. `async=true` (default) answers 202 with the job id;
   * `async=false` waits for the job up to the request timeout, then 504 naming the job, which goes on.
   */
  @OpenApi({ body: BulkMetadataDto })
  @Patch()
  @BodyLimit(2) // metadata of up to 1 MB (MAX_METADATA_BYTES) and its wrapper
  @Policy('corpus.write')
  async bulkUpdateMetadata(
    @Param('corpus_key') corpusKey: string,
    @Body() body: unknown,
    @Query('document_ids') documentIds: string | undefined,
    @Query('metadata_filter') metadataFilter: string | undefined,
    @Query('async') asyncParam: string | undefined,
    @Headers('request-timeout') timeoutSeconds: string | undefined,
    @Headers('request-timeout-millis') timeoutMillis: string | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) res: Response,
  ) {
    if (asyncParam !== undefined && asyncParam !== 'true' && asyncParam !== 'false') throw invalid('request.invalid', 'async must be true or false', { async: 'must be true or false' });
    const ids = documentIds?.split(',').map((id) => id.trim()).filter(Boolean);
    if (ids && ids.length > MAX_BULK_DOCUMENT_IDS) {
      throw invalid('request.invalid', `document_ids may list at most ${MAX_BULK_DOCUMENT_IDS} documents`, { document_ids: `at most ${MAX_BULK_DOCUMENT_IDS} ids` });
    }
    if (!ids?.length && !metadataFilter?.trim()) {
      throw invalid('request.invalid', 'Select the documents with document_ids or metadata_filter', { document_ids: 'document_ids or metadata_filter is required' });
    }
    const dto = validateBody(BulkMetadataDto, body);
    const timeoutMs = requestTimeoutMs(timeoutSeconds, timeoutMillis);
    const result: WriteResult<QueuedJob> = await this.commands.execute(
      new QueueBulkMetadataUpdate(corpusKey, { documentIds: ids, metadataFilter: ids?.length ? undefined : metadataFilter }, dto.metadata, dto.strategy ?? 'merge', ctx),
    );
    const base = { job_id: result.value.jobId, ...(result.value.cutoffAt ? { cutoff_at: result.value.cutoffAt } : {}) };
    if (asyncParam !== 'false') {
      res.status(202);
      return { type: 'async', ...base };
    }
    const job = await waitForJob(this.reads, result.value.jobId, timeoutMs);
    if (!job) throw new DomainError('timeout', 'job.wait_timeout', `The update did not finish within ${timeoutMs} ms; it goes on as job ${result.value.jobId}`);
    if (job.state === 'failed') throw new DomainError('unprocessable', 'job.failed', `Job ${job.id} failed: ${job.comment ?? 'unknown reason'}`);
    res.status(200);
    return { type: 'success', ...base, updated_count: job.counts.updated, skipped_count: job.counts.skipped, failed_count: job.counts.failed };
  }

  /**
   * Bulk delete (docs/corpora.md): a job over the listed documents (a missing one is skipped) or those the filter
   * selects at the time of the request. `async=true` (default) answers 202 with the job id; `async=false` waits
   * up to the request timeout and answers the counts, or 504 naming the job, which goes on.
   */
  @Delete()
  @Policy('corpus.write')
  async bulkDelete(
    @Param('corpus_key') corpusKey: string,
    @Query('document_ids') documentIds: string | undefined,
    @Query('metadata_filter') metadataFilter: string | undefined,
    @Query('async') asyncParam: string | undefined,
    @Headers('request-timeout') timeoutSeconds: string | undefined,
    @Headers('request-timeout-millis') timeoutMillis: string | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) res: Response,
  ) {
    if (asyncParam !== undefined && asyncParam !== 'true' && asyncParam !== 'false') throw invalid('request.invalid', 'async must be true or false', { async: 'must be true or false' });
    const ids = documentIds?.split(',').map((id) => id.trim()).filter(Boolean);
    if (ids && ids.length > MAX_BULK_DOCUMENT_IDS) throw invalid('request.invalid', `document_ids may list at most ${MAX_BULK_DOCUMENT_IDS} documents`, { document_ids: `at most ${MAX_BULK_DOCUMENT_IDS} ids` });
    if (!ids?.length && !metadataFilter?.trim()) throw invalid('request.invalid', 'Select the documents with document_ids or metadata_filter', { document_ids: 'document_ids or metadata_filter is required' });
    const timeoutMs = requestTimeoutMs(timeoutSeconds, timeoutMillis);
    const result: WriteResult<QueuedJob> = await this.commands.execute(new QueueBulkDelete(corpusKey, { documentIds: ids, metadataFilter: ids?.length ? undefined : metadataFilter }, ctx));
    const base = { job_id: result.value.jobId, ...(result.value.cutoffAt ? { cutoff_at: result.value.cutoffAt } : {}) };
    if (asyncParam !== 'false') {
      res.status(202);
      return { type: 'async', response_type: 'async', ...base };
    }
    const job = await waitForJob(this.reads, result.value.jobId, timeoutMs);
    if (!job) throw new DomainError('timeout', 'job.wait_timeout', `The deletion did not finish within ${timeoutMs} ms; it goes on as job ${result.value.jobId}`);
    if (job.state === 'failed') throw new DomainError('unprocessable', 'job.failed', `Job ${job.id} failed: ${job.comment ?? 'unknown reason'}`);
    res.status(200);
    return { type: 'success', response_type: 'success', ...base, deleted_count: job.counts.updated, skipped_count: job.counts.skipped, failed_count: job.counts.failed };
  }

  /** Merges the given metadata into the document's (the reference API's PATCH on a document). */
  @OpenApi({ body: MetadataDto, statuses: [202] })
  @Patch(':document_id')
  @BodyLimit(2) // metadata of up to 1 MB and its wrapper
  @Policy('corpus.write')
  async mergeMetadata(@Param('corpus_key') corpusKey: string, @Param('document_id') documentId: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    return this.updateMetadata(corpusKey, documentId, body, 'merge', ctx, res);
  }

  /** Replaces the document's metadata. */
  @OpenApi({ body: MetadataDto, statuses: [202] })
  @Put(':document_id/metadata')
  @BodyLimit(2) // metadata of up to 1 MB and its wrapper
  @Policy('corpus.write')
  async replaceMetadata(@Param('corpus_key') corpusKey: string, @Param('document_id') documentId: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    return this.updateMetadata(corpusKey, documentId, body, 'replace', ctx, res);
  }

  private async updateMetadata(corpusKey: string, documentId: string, body: unknown, strategy: 'merge' | 'replace', ctx: CommandContext, res: Response) {
    const dto = validateBody(MetadataDto, body);
    const result: WriteResult<{ changed: boolean }> = await this.commands.execute(new UpdateDocumentMetadata(corpusKey, documentId, dto.metadata, strategy, ctx));
    statusFor(result, 200, res);
    return this.queries.execute(new GetDocument(corpusKey, documentId));
  }

  @Get(':document_id')
  @Policy('corpus.read')
  async get(@Param('corpus_key') corpusKey: string, @Param('document_id') documentId: string) {
    return this.queries.execute(new GetDocument(corpusKey, documentId));
  }

  /** One image of a document with its Base64 data (the reference API's retrieve-image operation). */
  @Get(':document_id/images/:image_id')
  @Policy('corpus.read')
  async image(@Param('corpus_key') corpusKey: string, @Param('document_id') documentId: string, @Param('image_id') imageId: string) {
    return this.queries.execute(new GetImage(corpusKey, documentId, imageId));
  }

  @OpenApi({ statuses: [202] })
  @Delete(':document_id')
  @Policy('corpus.write')
  @HttpCode(204)
  async remove(@Param('corpus_key') corpusKey: string, @Param('document_id') documentId: string, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new DeleteDocument(corpusKey, documentId, ctx)), 204, res);
  }
}
