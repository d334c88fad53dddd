import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateIf, ValidateNested, ArrayMinSize, ArrayMaxSize } from 'class-validator';
import { Type } from 'class-transformer';
import { apiEventView, isApiEvent, SessionApiEvent, SessionFeed, SessionInputs, Sessions } from '@lib/agents';
import { EndUserCaller, EndUserSessions } from '@lib/aliases';
import { endUserAgentsOf, Principal } from '@lib/auth';
import { CommandContext, DomainError } from '@lib/platform';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { BodyLimit } from '../http/body-limit';
import { Policy } from '../http/policy';
import { SseStream } from '../http/sse';
import { validateBody, validationError } from '../http/validation';
import { KEY_PATTERN } from './agents.dto';
import { agentInputs, misplacedInputFields, ToolApprovalDto } from './sessions.dto';
import { END_FRAME, followSession, sseSink, StreamView } from './session-sse';
import { OpenApi } from '../openapi/openapi.decorator';

class EndUserSessionDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'key may hold only letters, digits, underscores and hyphens' }) key?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) name?: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}

/** Text, or a skill of the agent loaded by name (the reference's AgentInput; the end user sees no skill's content). */
class EndUserTextDto {
  @IsIn(['text', 'skill'], { message: 'type must be text or skill' }) type!: 'text' | 'skill';
  @ValidateIf((o: EndUserTextDto) => o.type !== 'skill') @IsString() @MinLength(1) @MaxLength(100_000) content?: string;
  @ValidateIf((o: EndUserTextDto) => o.type === 'skill') @IsString() @MinLength(1) @MaxLength(64) skill_name?: string;
}

class EndUserInputDto {
  @IsOptional() @IsIn(['input_message'], { message: 'an end user sends input_message' }) type?: 'input_message';
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(20) @ValidateNested({ each: true }) @Type(() => EndUserTextDto) messages!: EndUserTextDto[];
  @IsOptional() @IsBoolean() stream_response?: boolean;
}

/**
 * What an end user sees of its sessions: the conversation, nothing of the machinery, except the tool calls it is
 * asked to approve (`approvers: session_user`) and their resolution.
 */
const CONVERSATION = new Set(['input_message', 'agent_output']);
const APPROVALS = new Set(['tool_approval_requested', 'tool_approval_resolved']);
const shownToEndUser = (view: Record<string, unknown>) => CONVERSATION.has(String(view.type)) || (APPROVALS.has(String(view.type)) && view.approvers === 'session_user');
/** `key`: the session's key as the end user gave it (stored in its own namespace). */
const endUserEvent = (view: Record<string, unknown>, key: string): Record<string, unknown> | undefined => (shownToEndUser(view) ? { ...view, ...('session_key' in view ? { session_key: key } : {}) } : undefined);

/** An end user's streams: the conversation and the answer's pieces, none of the machinery. */
const endUserView = (key: string): StreamView => ({ event: (view) => endUserEvent(view, key), machinery: false });

/** Who owns an end-user session (the end user of an app client's token, else the caller itself) and what it reaches. */
export function endUserCaller(caller: Principal): EndUserCaller {
  const owner = caller.endUser && caller.appClientId ? `${caller.appClientId}/${caller.endUser}` : `${caller.actor.type}:${caller.actor.id}`;
  return { owner, endUser: { id: caller.endUser ?? owner, ...(caller.appClientId ? { app_client_id: caller.appClientId } : {}) }, agents: endUserAgentsOf(caller) };
}

/**
 * End-user sessions through an alias (docs/end-user-sessions.md): for untrusted clients holding `agent_end_user`
 * (typically an app client's token minted for one end user). A caller reaches only the sessions it created —
 * another's is absent (404) — and sees only the conversation: its messages and the agent's answers, never tool
 * calls, thinking, step changes or secrets.
 */
@Controller('v2/agent_aliases/:alias_key/end_user_sessions')
export class EndUserSessionsController {
  constructor(
    private readonly endUsers: EndUserSessions,
    private readonly sessions: Sessions,
    private readonly inputs: SessionInputs,
    private readonly feed: SessionFeed,
  ) {}

  /**
   * Only the metadata fields the alias's policy declares (`end_user_metadata`); `end_user` is written from the
   * credential over anything sent there, so routing may partition on `get('$.session.metadata.end_user.id')`.
   */
  @OpenApi({ body: EndUserSessionDto, statuses: [409] })
  @Post()
  @Policy('alias.end_user')
  async create(@Param('alias_key') aliasKey: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const req = validateBody(EndUserSessionDto, body);
    const created = await this.endUsers.create(aliasKey, endUserCaller(caller), { ...(req.key ? { key: req.key } : {}), ...(req.name ? { name: req.name } : {}), ...(req.metadata ? { metadata: req.metadata } : {}) }, ctx);
    res.status(201);
    return created;
  }

  @Get()
  @Policy('alias.end_user')
  async list(@Param('alias_key') aliasKey: string, @Caller() caller: Principal, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    return this.endUsers.list(aliasKey, endUserCaller(caller), pageLimit(limit, 10, 100), pageKey);
  }

  @Get(':session_key')
  @Policy('alias.end_user')
  async get(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal) {
    const who = endUserCaller(caller);
    const { agentKey, sessionKey } = await this.endUsers.own(aliasKey, who, key);
    return this.endUsers.view(await this.sessions.get(agentKey, sessionKey), who);
  }

  @Get(':session_key/events')
  @Policy('alias.end_user')
  async events(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    const { agentKey, sessionKey } = await this.endUsers.own(aliasKey, endUserCaller(caller), key);
    const offset = offsetOfPageKey(pageKey);
    const n = pageLimit(limit, 10, 100);
    const { page } = await this.sessions.events(agentKey, sessionKey, { limit: 1_000_000, offset: 0, includeHidden: false });
    const shown = page.filter(isApiEvent).map((e) => endUserEvent(apiEventView(e as SessionApiEvent, key), key)).filter((v): v is Record<string, unknown> => !!v);
    return { events: shown.slice(offset, offset + n), metadata: offset + n < shown.length ? { page_key: offsetPageKey(offset + n) } : {} };
  }

  /** The tool calls of the end user's session that wait for its own approval (`approvers: session_user`). */
  @Get(':session_key/pending_approvals')
  @Policy('alias.end_user')
  async pendingApprovals(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal) {
    const { agentKey, sessionKey } = await this.endUsers.own(aliasKey, endUserCaller(caller), key);
    return { approvals: (await this.inputs.pendingApprovals(agentKey, sessionKey)).filter((a) => a.approvers === 'session_user') };
  }

  /** A message from the end user; the answer comes back as the conversation's events (or streamed). */
  @OpenApi({ body: [EndUserInputDto, ToolApprovalDto], stream: true, status: 201, statuses: [409] })
  @Post(':session_key/events')
  @BodyLimit(50) // up to 20 messages of 100,000 characters
  @Policy('alias.end_user')
  async input(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res() res: Response) {
    const who = endUserCaller(caller);
    const { agentKey, sessionKey } = await this.endUsers.own(aliasKey, who, key);
    const approval = (body as { type?: unknown } | null)?.type === 'tool_approval' ? validateBody(ToolApprovalDto, body) : undefined;
    const dto = approval ?? validateBody(EndUserInputDto, body);
    const misplaced = approval ? {} : misplacedInputFields((dto as EndUserInputDto).messages);
    if (Object.keys(misplaced).length) throw validationError(misplaced);
    // An end user decides only what names it (approvers: session_user); it is never the agent's administrator.
    const request = approval
      ? { type: 'tool_approval' as const, tool_call_id: approval.tool_call_id, decision: approval.decision, ...(approval.arguments ? { arguments: approval.arguments } : {}), ...(approval.reason ? { reason: approval.reason } : {}), decider: { principal: who.owner, agentAdmin: false } }
      : { type: 'input_message' as const, messages: agentInputs((dto as EndUserInputDto).messages) };
    if (!dto.stream_response) {
      const result = await this.inputs.input(agentKey, sessionKey, request, ctx);
      if (result.error && result.events.length === 0) throw result.error;
      res.status(201).json({ events: result.events.map((e) => endUserEvent(e, key)).filter(Boolean), session_key: key, ...(result.error ? { error: { messages: [result.error.message] } } : {}) });
      return;
    }
    const stream = SseStream.open(res, undefined, 201);
    const send = (event: Record<string, unknown>) => stream.send({ event: String(event.type), data: JSON.stringify(event) });
    try {
      const result = await this.inputs.input(agentKey, sessionKey, request, ctx, sseSink(stream, endUserView(key)), true);
      if (result.error) send({ type: 'error', messages: [result.error.message], request_id: ctx.requestId });
    } catch (e) {
      send({ type: 'error', messages: [e instanceof DomainError ? e.message : 'Internal server error.'], request_id: ctx.requestId });
    } finally {
      stream.end(END_FRAME);
    }
  }

  /**
   * The conversation as server-sent events, re-attachable to a running turn: the answer streamed so far, then the
   * rest live (`Last-Event-ID`, `until=turn_end`: docs/agents.md). Only what the events route shows, and the
   * answer's pieces.
   */
  @OpenApi({ stream: true })
  @Get(':session_key/stream')
  @Policy('alias.end_user')
  async stream(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal, @Query('until') until: string | undefined, @Req() req: Request, @Res() res: Response) {
    const { agentKey, sessionKey } = await this.endUsers.own(aliasKey, endUserCaller(caller), key);
    const { streamId } = await this.sessions.active(agentKey, sessionKey);
    await followSession(this.feed, streamId, sessionKey, until, req, res, endUserView(key));
  }
}

