import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { DeleteDocument, DocumentInput, DocumentStats, GetDocument, IndexDocument, ListDocuments, StructuredSectionInput, WriteResult } from '@lib/corpora';
import { CommandContext, invalid } from '@lib/platform';
import { Policy } from '../http/policy';
import { Ctx } from '../http/command-context';
import { validateBody } from '../http/validation';
import { statusFor } from '../http/write-status';
import { CoreDocumentDto, SectionDto, StructuredDocumentDto } from './document.dto';
import { pageLimit } from './paging';

function sectionsOf(sections: SectionDto[]): StructuredSectionInput[] {
  return sections.map((s) => ({ title: s.title, text: s.text, metadata: s.metadata, sections: s.sections ? sectionsOf(s.sections) : undefined }));
}

function toInput(body: unknown): DocumentInput {
  const type = (body as { type?: unknown } | null)?.type;
  if (type === 'core') {
    const dto = validateBody(CoreDocumentDto, body);
    return { type: 'core', id: dto.id, metadata: dto.metadata ?? {}, parts: dto.document_parts };
  }
  if (type === 'structured') {
    const dto = validateBody(StructuredDocumentDto, body);
    const c = dto.chunking_strategy;
    return {
      type: 'structured',
      id: dto.id,
      title: dto.title,
      description: dto.description,
      metadata: dto.metadata ?? {},
      sections: sectionsOf(dto.sections),
      chunking: c ? (c.type === 'max_chars_chunking_strategy' ? { type: c.type, maxCharsPerChunk: c.max_chars_per_chunk! } : { type: c.type }) : undefined,
    };
  }
  throw invalid('request.invalid', 'type must be "core" or "structured"', { type: 'must be "core" or "structured"' });
}

@Controller('v2/corpora/:corpus_key/documents')
export class DocumentsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Post()
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
    const input = toInput(body);
    const result: WriteResult<DocumentStats> = await this.commands.execute(new IndexDocument(corpusKey, input, waitFor === 'indexed' ? 'indexed' : 'searchable', ctx));
    statusFor(result, 201, res);
    return {
      id: input.id,
      metadata: input.metadata,
      storage_usage: { bytes_used: result.value.characters, metadata_bytes_used: result.value.metadataBytes },
    };
  }

  @Get()
  @Policy('corpus.read')
  async list(@Param('corpus_key') corpusKey: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('metadata_filter') filter?: string) {
    if (filter) throw invalid('request.unsupported', 'metadata_filter on document lists is not supported yet', { metadata_filter: 'not supported yet' });
    return this.queries.execute(new ListDocuments(corpusKey, pageLimit(limit, 10, 1000), pageKey));
  }

  @Get(':document_id')
  @Policy('corpus.read')
  async get(@Param('corpus_key') corpusKey: string, @Param('document_id') documentId: string) {
    return this.queries.execute(new GetDocument(corpusKey, documentId));
  }

  @Delete(':document_id')
  @Policy('corpus.write')
  @HttpCode(204)
  async remove(@Param('corpus_key') corpusKey: string, @Param('document_id') documentId: string, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new DeleteDocument(corpusKey, documentId, ctx)), 204, res);
  }
}
