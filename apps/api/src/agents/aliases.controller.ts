import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { IsBoolean, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { SessionFeed, SessionInputs, Sessions } from '@lib/agents';
import { AliasInput, AliasPolicy, Aliases } from '@lib/aliases';
import { Action, allows, Principal, scopesOf } from '@lib/auth';
import { CommandContext, invalid, notFound } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { BodyLimit } from '../http/body-limit';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { KEY_PATTERN } from './agents.dto';
import { SessionsController } from './sessions.controller';
import { CreateSessionDto } from './sessions.dto';
import { OpenApi } from '../openapi/openapi.decorator';

class UpdateAliasDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(100) name?: string;
  @IsOptional() @IsString() @MaxLength(10_000) description?: string | null;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsObject() metadata?: Record<string, unknown> | null;
}

class CreateAliasDto {
  @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'key may hold only letters, digits, underscores and hyphens' }) key!: string;
  @IsString() @MinLength(1) @MaxLength(100) name!: string;
  @IsOptional() @IsString() @MaxLength(10_000) description?: string | null;
  /** Checked by the domain, which names the field (rules, targets, weights, expressions, agents). */
  @IsObject() policy!: AliasPolicy;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsObject() metadata?: Record<string, unknown> | null;
}

class ReplacePolicyDto {
  @IsObject() policy!: AliasPolicy;
}

/**
 * Agent aliases (`/v2/agent_aliases`, docs/aliases.md) and the sessions created through them. An alias-routed
 * session's calls reach the agent its routing chose at creation: the caller needs the same role on that agent
 * as on the agent's own session routes, and is told the session does not exist otherwise.
 */
@Controller('v2/agent_aliases')
export class AliasesController {
  private readonly inner: SessionsController;

  constructor(
    private readonly aliases: Aliases,
    sessions: Sessions,
    inputs: SessionInputs,
    feed: SessionFeed,
  ) {
    this.inner = new SessionsController(sessions, inputs, feed);
  }

  /** The agent of an alias-routed session, if the caller may act on it so (404 as if absent otherwise). */
  private async agentOf(aliasKey: string, sessionKey: string, caller: Principal, actions: readonly Action[]): Promise<string> {
    const agentKey = await this.aliases.agentOf(aliasKey, sessionKey);
    if (!agentKey || !actions.some((a) => allows(caller.caps, a, agentKey))) throw notFound('session.not_found', `Alias "${aliasKey}" has no session "${sessionKey}"`, sessionKey);
    return agentKey;
  }

  @OpenApi({ body: CreateAliasDto })
  @Post()
  @Policy('alias.develop')
  async create(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const created = await this.aliases.create({ ...validateBody(CreateAliasDto, body) } as AliasInput, caller, ctx);
    res.status(201);
    return created;
  }

  @Get()
  @Policy('alias.read')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('aliased_agent_key') agentKey?: string) {
    return this.aliases.list(pageLimit(limit, 10, 100), pageKey, agentKey);
  }

  @Get(':alias_key')
  @Policy('alias.read')
  async get(@Param('alias_key') key: string) {
    return this.aliases.get(key);
  }

  @OpenApi({ body: UpdateAliasDto })
  @Patch(':alias_key')
  @Policy('alias.develop')
  async update(@Param('alias_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    return this.aliases.update(key, { ...validateBody(UpdateAliasDto, body) } as AliasInput, caller, ctx);
  }

  @OpenApi({ body: ReplacePolicyDto })
  @Put(':alias_key/policy')
  @Policy('alias.administer')
  async replacePolicy(@Param('alias_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    return this.aliases.replacePolicy(key, validateBody(ReplacePolicyDto, body).policy, caller, ctx);
  }

  @Delete(':alias_key')
  @HttpCode(204)
  @Policy('alias.administer')
  async remove(@Param('alias_key') key: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    await this.aliases.remove(key, caller, ctx);
  }

  /** Routed once here; the caller needs `agent.use` on the agent the policy picks (403 naming it otherwise). */
  @OpenApi({ body: CreateSessionDto, statuses: [409] })
  @Post(':alias_key/sessions')
  @Policy('alias.use')
  async createSession(@Param('alias_key') aliasKey: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const req = validateBody(CreateSessionDto, body);
    if (req.from_session) throw notFound('session.not_found', 'Sessions created through an alias cannot fork: fork on the agent', 'from_session');
    // The alias picks the agent: a revision number would name a revision of an agent the caller did not choose.
    if (req.agent_revision !== undefined) throw invalid('session.invalid_agent_revision', 'A session created through an alias cannot be pinned: create it on the agent', { agent_revision: 'not allowed through an alias' });
    const created = await this.aliases.createSession(aliasKey, { ...req, created_by: undefined } as never, ctx, (agentKey) => allows(caller.caps, 'agent.use', agentKey));
    res.status(201);
    return created;
  }

  @Get(':alias_key/sessions')
  @Policy('alias.session_read')
  async listSessions(@Param('alias_key') aliasKey: string, @Caller() caller: Principal, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    const views = scopesOf(caller.caps, 'agent.view');
    const uses = scopesOf(caller.caps, 'agent.use');
    const visible = (agentKey: string) => views === '*' || uses === '*' || views.includes(agentKey) || uses.includes(agentKey);
    return this.aliases.sessionsOf(aliasKey, pageLimit(limit, 10, 100), pageKey, visible);
  }

  @Get(':alias_key/sessions/:session_key')
  @Policy('alias.session_read')
  async getSession(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal, @Query('as_of') asOf?: string) {
    return this.inner.get(await this.agentOf(aliasKey, key, caller, ['agent.use', 'agent.view']), key, asOf);
  }

  @OpenApi({ like: [SessionsController, 'update'] })
  @Patch(':alias_key/sessions/:session_key')
  @Policy('alias.session_develop')
  async updateSession(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    return this.inner.update(await this.agentOf(aliasKey, key, caller, ['agent.develop']), key, body, ctx);
  }

  @Delete(':alias_key/sessions/:session_key')
  @HttpCode(204)
  @Policy('alias.session_develop')
  async removeSession(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    await this.inner.remove(await this.agentOf(aliasKey, key, caller, ['agent.develop']), key, ctx);
  }

  @OpenApi({ like: [SessionsController, 'input'] })
  @Post(':alias_key/sessions/:session_key/events')
  @BodyLimit(50) // up to 100 messages of 1,000,000 characters
  @Policy('alias.use')
  async input(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Req() req: Request, @Res() res: Response) {
    return this.inner.input(await this.agentOf(aliasKey, key, caller, ['agent.use']), key, body, ctx, req, res, caller);
  }

  @Get(':alias_key/sessions/:session_key/pending_approvals')
  @Policy('alias.use')
  async pendingApprovals(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal) {
    return this.inner.pendingApprovals(await this.agentOf(aliasKey, key, caller, ['agent.use']), key);
  }

  @Get(':alias_key/sessions/:session_key/events')
  @Policy('alias.read')
  async events(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal, @Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('include_hidden') includeHidden?: string, @Query('as_of') asOf?: string) {
    return this.inner.events(await this.agentOf(aliasKey, key, caller, ['agent.view']), key, limit, pageKey, includeHidden, asOf);
  }

  /** The session's stream, re-attachable to a running turn (as on the agent's route; docs/agents.md). */
  @OpenApi({ stream: true })
  @Get(':alias_key/sessions/:session_key/stream')
  @Policy('alias.read')
  async stream(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal, @Query('until') until: string | undefined, @Req() req: Request, @Res() res: Response) {
    return this.inner.stream(await this.agentOf(aliasKey, key, caller, ['agent.view']), key, until, req, res);
  }

  @Get(':alias_key/sessions/:session_key/outstanding_client_tool_calls')
  @Policy('alias.use')
  async outstanding(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal) {
    return this.inner.outstanding(await this.agentOf(aliasKey, key, caller, ['agent.use']), key);
  }

  @Get(':alias_key/sessions/:session_key/events/:event_id')
  @Policy('alias.read')
  async event(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Param('event_id') eventId: string, @Caller() caller: Principal) {
    return this.inner.event(await this.agentOf(aliasKey, key, caller, ['agent.view']), key, eventId);
  }

  @Delete(':alias_key/sessions/:session_key/events/:event_id')
  @HttpCode(204)
  @Policy('alias.administer')
  async deleteEvent(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Param('event_id') eventId: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    await this.inner.deleteEvent(await this.agentOf(aliasKey, key, caller, ['agent.administer']), key, eventId, ctx);
  }

  @Post(':alias_key/sessions/:session_key/events/:event_id/hide')
  @HttpCode(200)
  @Policy('alias.session_develop')
  async hide(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Param('event_id') eventId: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    return this.inner.hide(await this.agentOf(aliasKey, key, caller, ['agent.develop']), key, eventId, ctx);
  }

  @Post(':alias_key/sessions/:session_key/events/:event_id/unhide')
  @HttpCode(200)
  @Policy('alias.session_develop')
  async unhide(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Param('event_id') eventId: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    return this.inner.unhide(await this.agentOf(aliasKey, key, caller, ['agent.develop']), key, eventId, ctx);
  }

  @Get(':alias_key/sessions/:session_key/artifacts')
  @Policy('alias.read')
  async artifacts(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal, @Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('metadata_filter') filter?: string, @Query('sort_by') sortBy?: string, @Query('order_by') orderBy?: string) {
    return this.inner.artifacts(await this.agentOf(aliasKey, key, caller, ['agent.view']), key, limit, pageKey, filter, sortBy, orderBy);
  }

  @Get(':alias_key/sessions/:session_key/artifacts/:artifact_id')
  @Policy('alias.read')
  async artifact(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Param('artifact_id') artifactId: string, @Caller() caller: Principal) {
    return this.inner.artifact(await this.agentOf(aliasKey, key, caller, ['agent.view']), key, artifactId);
  }
}
