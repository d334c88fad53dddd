import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import {
  ComputeCorpusSize,
  CreateCorpus,
  DeleteCorpus,
  GetCorpus,
  GetFilterAttributeStats,
  ListCorpora,
  ListFilterValues,
  QueuedJob,
  QueueReplaceFilterAttributes,
  ResetCorpus,
  UpdateCorpus,
  WriteResult,
  MetadataQuery,
} from '@lib/corpora';
import { CommandContext, listFilter } from '@lib/platform';
import { Principal, scopesOf } from '@lib/auth';
import { Caller } from '../http/caller';
import { Policy } from '../http/policy';
import { Ctx } from '../http/command-context';
import { statusFor } from '../http/write-status';
import { validateBody } from '../http/validation';
import { CreateCorpusDto, MetadataQueryDto, ReplaceFilterAttributesDto, UpdateCorpusDto } from './corpus.dto';
import { pageLimit } from '../http/paging';
import { OpenApi } from '../openapi/openapi.decorator';

@Controller('v2/corpora')
export class CorporaController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @OpenApi({ body: CreateCorpusDto, statuses: [202] })
  @Post()
  @Policy('corpus.create')
  async create(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(CreateCorpusDto, body);
    const result: WriteResult<{ corpusId: string }> = await this.commands.execute(
      new CreateCorpus(
        dto.key,
        {
          name: dto.name,
          description: dto.description ?? '',
          enabled: true,
          saveHistory: dto.save_history ?? false,
          queriesAreAnswers: dto.queries_are_answers ?? false,
          documentsAreQuestions: dto.documents_are_questions ?? false,
          encoderName: dto.encoder_name,
          requestTimeout: dto.request_timeout,
          requestTimeoutMillis: dto.request_timeout_millis,
          filterAttributes: (dto.filter_attributes ?? []).map((a) => ({ ...a, indexed: a.indexed ?? true })),
        },
        ctx,
      ),
    );
    statusFor(result, 201, res);
    // Not yet in the read model (202): answer with what was stored rather than a stale or missing read.
    if (!result.visible) return { id: result.value.corpusId, key: dto.key, name: dto.name, description: dto.description ?? '' };
    return this.queries.execute(new GetCorpus(dto.key));
  }

  @Get()
  @Policy('corpus.list')
  async list(@Caller() caller: Principal, @Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string) {
    const regex = listFilter(filter);
    const scopes = scopesOf(caller.caps, 'corpus.read');
    return this.queries.execute(new ListCorpora(pageLimit(limit, 10, 100), pageKey, regex, scopes === '*' ? undefined : scopes));
  }

  @Get(':corpus_key')
  @Policy('corpus.read')
  async get(@Param('corpus_key') key: string) {
    return this.queries.execute(new GetCorpus(key));
  }

  @OpenApi({ body: UpdateCorpusDto, statuses: [202] })
  @Patch(':corpus_key')
  @Policy('corpus.configure')
  async update(@Param('corpus_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(UpdateCorpusDto, body);
    const result: WriteResult<unknown> = await this.commands.execute(
      new UpdateCorpus(key, { name: dto.name, description: dto.description, enabled: dto.enabled, saveHistory: dto.save_history }, ctx),
    );
    statusFor(result, 200, res);
    if (!result.visible) return { key, ...(body as Record<string, unknown>) };
    return this.queries.execute(new GetCorpus(key));
  }

  /** Removes every document; the corpus and its settings stay. */
  @OpenApi({ statuses: [202] })
  @Post(':corpus_key/reset')
  @Policy('corpus.delete')
  @HttpCode(204)
  async reset(@Param('corpus_key') key: string, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new ResetCorpus(key, ctx)), 204, res);
  }

  @OpenApi({ body: ReplaceFilterAttributesDto })
  @Post(':corpus_key/replace_filter_attributes')
  @Policy('corpus.configure')
  @HttpCode(200)
  async replaceFilterAttributes(@Param('corpus_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    const dto = validateBody(ReplaceFilterAttributesDto, body);
    const attrs = dto.filter_attributes.map((a) => ({ ...a, indexed: a.indexed ?? true }));
    const result: WriteResult<QueuedJob> = await this.commands.execute(new QueueReplaceFilterAttributes(key, attrs, ctx));
    return { job_id: result.value.jobId };
  }

  /** Distinct values of one filter attribute (`doc.<name>` / `part.<name>`), newest index state. */
  @Get(':corpus_key/filter_attributes/:attribute/values')
  @Policy('corpus.read')
  async filterValues(
    @Param('corpus_key') key: string,
    @Param('attribute') attribute: string,
    @Query('fuzzy_match') fuzzyMatch?: string,
    @Query('metadata_filter') metadataFilter?: string,
    @Query('limit') limit?: string,
  ) {
    return this.queries.execute(new ListFilterValues(key, attribute, { fuzzyMatch, metadataFilter, limit: pageLimit(limit, 100, 1000) }));
  }

  /** Most frequent values and numeric statistics of the filter attributes, over the parts a filter selects. */
  @Get(':corpus_key/filter_attribute_stats')
  @Policy('corpus.read')
  async filterAttributeStats(
    @Param('corpus_key') key: string,
    @Query('fields') fields?: string,
    @Query('metadata_filter') metadataFilter?: string,
    @Query('max_values') maxValues?: string,
  ) {
    return this.queries.execute(new GetFilterAttributeStats(key, { fields, metadataFilter, maxValues: pageLimit(maxValues, 100, 1000, 'max_values') }));
  }

  /** Documents (or parts) ranked by fuzzy matches on metadata fields (docs/corpora.md); `corpus.read`, as the reference. */
  @OpenApi({ body: MetadataQueryDto })
  @Post(':corpus_key/metadata_query')
  @Policy('corpus.read')
  @HttpCode(200)
  async metadataQuery(@Param('corpus_key') key: string, @Body() body: unknown) {
    const dto = validateBody(MetadataQueryDto, body);
    const queries = dto.queries.map((q) => ({ field: q.field, query: q.query ?? '', weight: q.weight ?? 1, fuzzy: q.fuzzy ?? true, prefix: q.prefix === null ? null : (q.prefix ?? 3) }));
    return this.queries.execute(new MetadataQuery(key, dto.level ?? 'document', queries, dto.metadata_filter, dto.limit ?? 10, dto.offset ?? 0));
  }

  /** Documents, parts, characters and metadata characters, summed over the corpus's documents now. */
  @Post(':corpus_key/compute_size')
  @Policy('corpus.configure')
  @HttpCode(200)
  async computeSize(@Param('corpus_key') key: string) {
    return this.queries.execute(new ComputeCorpusSize(key));
  }

  @OpenApi({ statuses: [202] })
  @Delete(':corpus_key')
  @Policy('corpus.delete')
  @HttpCode(204)
  async remove(@Param('corpus_key') key: string, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new DeleteCorpus(key, ctx)), 204, res);
  }
}
