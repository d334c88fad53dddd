import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { IsBoolean, IsInt, IsNumber, IsObject, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { CustomerPresets, GenerationPresetPage, ListGenerationPresets } from '@lib/retrieval';
import { CommandContext, invalid, listFilter } from '@lib/platform';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../http/paging';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';

/** The reference's CreateGenerationPresetRequest (PUT takes the same body: a preset is replaced whole). */
class PresetDto {
  @IsString() @MinLength(1) @MaxLength(100) name!: string;
  @IsOptional() @IsString() @MaxLength(10_000) description?: string;
  @IsString() @MinLength(1) @MaxLength(255) llm_name!: string;
  @IsString() @MinLength(1) @MaxLength(100_000) prompt_template!: string;
  @IsOptional() @IsInt() @Min(1) @Max(100) max_used_search_results?: number;
  @IsOptional() @IsInt() @Min(1) @Max(1_000_000) max_tokens?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number;
  @IsOptional() @IsNumber() @Min(-2) @Max(2) frequency_penalty?: number;
  @IsOptional() @IsNumber() @Min(-2) @Max(2) presence_penalty?: number;
  @IsOptional() @IsObject() additional_model_params?: Record<string, unknown>;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsBoolean() default?: boolean;
  /** Read-only in the reference's shape: accepted, and must say `customer` if given. */
  @IsOptional() @IsString() ownership?: string;
  @IsOptional() @IsString() id?: string;
}

function settingsOf(body: unknown) {
  const { ownership, id: _id, ...dto } = validateBody(PresetDto, body);
  if (ownership !== undefined && ownership !== 'customer') throw invalid('request.invalid', 'Invalid ownership: presets you create are the customer\'s', { ownership: 'must be customer' });
  return { ...dto, enabled: dto.enabled ?? true, default: dto.default ?? false };
}

/**
 * Generation presets (`/v2/generation_presets`, docs/generation.md): the built-in ones (read-only) and the
 * customer's, which administrators create, replace and delete.
 */
@Controller('v2/generation_presets')
export class GenerationPresetsController {
  constructor(
    private readonly queries: QueryBus,
    private readonly presets: CustomerPresets,
  ) {}

  /** The reference allows corpus_viewer … owner, the same callers as the LLM list: `llm.use` says exactly that. */
  @Get()
  @Policy('llm.use')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string, @Query('llm_name') llmName?: string) {
    const regex = listFilter(filter);
    const page: GenerationPresetPage = await this.queries.execute(new ListGenerationPresets(offsetOfPageKey(pageKey), pageLimit(limit, 10, 100), regex, llmName || undefined));
    return { generation_presets: page.generation_presets, metadata: page.nextOffset !== undefined ? { page_key: offsetPageKey(page.nextOffset) } : {} };
  }

  /** The reference: administrator and owner. */
  @OpenApi({ body: PresetDto })
  @Post()
  @Policy('llm.manage')
  async create(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const created = await this.presets.create(settingsOf(body), ctx);
    res.status(201);
    return created;
  }

  @OpenApi({ body: PresetDto })
  @Put(':generation_preset_id')
  @Policy('llm.manage')
  async replace(@Param('generation_preset_id') id: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    return this.presets.replace(id, settingsOf(body), ctx);
  }

  @Delete(':generation_preset_id')
  @HttpCode(204)
  @Policy('llm.manage')
  async remove(@Param('generation_preset_id') id: string, @Ctx() ctx: CommandContext) {
    await this.presets.remove(id, ctx);
  }
}
