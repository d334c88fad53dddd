import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional, IsString, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { HallucinationCorrection } from '@lib/llms';
import { CommandContext, listFilter } from '@lib/platform';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../http/paging';
import { Ctx } from '../http/command-context';
import { BodyLimit } from '../http/body-limit';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';

class SourceDocumentDto {
  @IsString() @MaxLength(1_000_000) text!: string;
}

class CorrectHallucinationsDto {
  @IsString() @MinLength(1) @MaxLength(1_000_000) generated_text!: string;
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(1000) @ValidateNested({ each: true }) @Type(() => SourceDocumentDto) documents!: SourceDocumentDto[];
  @IsString() @MinLength(1) @MaxLength(255) model_name!: string;
  @IsOptional() @IsString() @MaxLength(100_000) query?: string;
}

/**
 * Hallucination correctors (docs/llms.md): every enabled registered model corrects, by minimal explained edits.
 * The reference allows corpus_viewer … owner: the callers of `llm.use`.
 */
@Controller('v2/hallucination_correctors')
export class HallucinationCorrectorsController {
  constructor(private readonly hcm: HallucinationCorrection) {}

  @Get()
  @Policy('llm.use')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string) {
    const regex = listFilter(filter);
    const all = (await this.hcm.correctors()).filter((c) => !regex || regex.test(String(c.name)) || regex.test(String(c.description)));
    const offset = offsetOfPageKey(pageKey);
    const n = pageLimit(limit, 10, 100);
    return { hallucination_correctors: all.slice(offset, offset + n), metadata: offset + n < all.length ? { page_key: offsetPageKey(offset + n) } : {} };
  }

  @OpenApi({ body: CorrectHallucinationsDto })
  @Post('correct_hallucinations')
  @BodyLimit(50) // a text and up to 1,000 source documents of 1,000,000 characters
  @HttpCode(200)
  @Policy('llm.use')
  async correct(@Body() body: unknown, @Ctx() ctx: CommandContext) {
    const dto = validateBody(CorrectHallucinationsDto, body);
    return this.hcm.correct({ generatedText: dto.generated_text, documents: dto.documents.map((d) => d.text), modelName: dto.model_name, ...(dto.query ? { query: dto.query } : {}) }, ctx);
  }
}
