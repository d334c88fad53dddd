import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { IsArray, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { Glossaries } from '@lib/agents';
import { CommandContext, listFilter } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Ctx } from '../http/command-context';
import { BodyLimit } from '../http/body-limit';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';

const KEY = /^[a-zA-Z0-9_=\-]+$/;

class CreateGlossaryDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY, { message: 'key may hold letters, digits, _, = and -' }) key?: string;
  @IsString() @MinLength(1) @MaxLength(100) name!: string;
  @IsOptional() @IsString() @MaxLength(500) description?: string;
}

class UpdateGlossaryDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(100) name?: string;
  @IsOptional() @IsString() @MaxLength(500) description?: string;
}

class UpsertEntriesDto {
  @IsObject() entries!: Record<string, string>;
}

class DeleteEntriesDto {
  @IsArray() @IsString({ each: true }) @MaxLength(200, { each: true }) terms!: string[];
}

/** `/v2/glossaries` and their entries: terms that agents' `glossary_expansion` reminders expand. */
@Controller('v2/glossaries')
export class GlossariesController {
  constructor(private readonly glossaries: Glossaries) {}

  @OpenApi({ body: CreateGlossaryDto })
  @Post()
  @Policy('glossary.manage')
  async create(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const created = await this.glossaries.create(validateBody(CreateGlossaryDto, body), ctx);
    res.status(201);
    return created;
  }

  @Get()
  @Policy('glossary.read')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string) {
    const regex = listFilter(filter);
    return this.glossaries.list(pageLimit(limit, 10, 100), pageKey, regex);
  }

  @Get(':glossary_key')
  @Policy('glossary.read')
  async get(@Param('glossary_key') key: string) {
    return this.glossaries.get(key);
  }

  @OpenApi({ body: UpdateGlossaryDto })
  @Patch(':glossary_key')
  @Policy('glossary.manage')
  async update(@Param('glossary_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    return this.glossaries.update(key, validateBody(UpdateGlossaryDto, body), ctx);
  }

  @Delete(':glossary_key')
  @Policy('glossary.manage')
  @HttpCode(204)
  async remove(@Param('glossary_key') key: string, @Ctx() ctx: CommandContext) {
    await this.glossaries.remove(key, ctx);
  }

  @OpenApi({ body: UpsertEntriesDto })
  @Post(':glossary_key/entries')
  @BodyLimit(50) // up to 100,000 terms a list
  @Policy('glossary.manage')
  @HttpCode(204)
  async upsert(@Param('glossary_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    await this.glossaries.upsert(key, validateBody(UpsertEntriesDto, body).entries, ctx);
  }

  @Get(':glossary_key/entries')
  @Policy('glossary.read')
  async entries(@Param('glossary_key') key: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    return this.glossaries.entries(key, pageLimit(limit, 100, 1000), pageKey);
  }

  @OpenApi({ body: DeleteEntriesDto })
  @Delete(':glossary_key/entries')
  @Policy('glossary.manage')
  @HttpCode(204)
  async deleteEntries(@Param('glossary_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    await this.glossaries.deleteTerms(key, validateBody(DeleteEntriesDto, body).terms, ctx);
  }
}
