import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import multer from 'multer';
import { agentRevisionOf, apiEventView, InputRequest, isApiEvent, SessionApiEvent, SessionEvent, SessionFeed, SessionInputs, Sessions, TurnSink } from '@lib/agents';
import { allows, Principal } from '@lib/auth';
import { CommandContext, DomainError, invalid, listFilter } from '@lib/platform';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { BodyLimit } from '../http/body-limit';
import { Policy } from '../http/policy';
import { SseStream } from '../http/sse';
import { jsonFormField, runMultipart } from '../http/form-fields';
import { validateBody, validationError } from '../http/validation';
import { END_FRAME, followSession, FULL_VIEW, sseSink } from './session-sse';
import { CompactDto, CreateSessionDto, agentInputs, InputMessageDto, InterruptDto, misplacedInputFields, ToolApprovalDto, ToolOutputDto, UpdateSessionDto } from './sessions.dto';
import { OpenApi } from '../openapi/openapi.decorator';

/** Artifacts per upload and their size: files are held in memory until stored. */
export const MAX_ARTIFACT_BYTES = 25 * 1024 * 1024;
const MAX_ARTIFACT_FILES = 20;
const UPLOAD_FIELDS = ['messages', 'message', 'metadata', 'stream_response', 'since', 'behavior'];

const artifactParts = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: MAX_ARTIFACT_BYTES, files: MAX_ARTIFACT_FILES, fields: 10, fieldSize: 1024 * 1024, parts: MAX_ARTIFACT_FILES + 10 },
}).array('files', MAX_ARTIFACT_FILES);

function parseArtifacts(req: Request, res: Response): Promise<void> {
  return runMultipart(artifactParts, req, res, {
    tooLarge: () => new DomainError('too_large', 'artifact.too_large', `A file is larger than ${MAX_ARTIFACT_BYTES} bytes (25 MiB)`),
    unexpectedFile: (field) => invalid('artifact.files', `Files go in the "files" part, at most ${MAX_ARTIFACT_FILES} per input`, { [field ?? 'files']: 'unexpected file part' }),
  });
}

/** An input message as the edge takes it: its DTO, and each part's fields those of its type (text or skill). */
function validateInputMessage(body: unknown): InputMessageDto {
  const dto = validateBody(InputMessageDto, body);
  const misplaced = misplacedInputFields(dto.messages);
  if (Object.keys(misplaced).length) throw validationError(misplaced);
  return dto;
}

const INPUT_DTOS = { input_message: InputMessageDto, interrupt: InterruptDto, compact: CompactDto, tool_output: ToolOutputDto, tool_approval: ToolApprovalDto } as const;

/**
 * Who decides on a tool approval, from the credential: the principal as `decided_by` shows it (`user:<name>`,
 * `api_key:<id>`, `app_client:<id>`; an end user as `<app client id>/<end user>`) and whether it administers the agent.
 */
export function approverOf(caller: Principal, agentKey: string): { principal: string; agentAdmin: boolean } {
  const principal = caller.endUser && caller.appClientId ? `${caller.appClientId}/${caller.endUser}` : `${caller.actor.type}:${caller.actor.id}`;
  return { principal, agentAdmin: caller.endUser === undefined && allows(caller.caps, 'agent.administer', agentKey) };
}

function booleanParam(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw invalid('request.invalid', `${name} must be true or false`, { [name]: 'must be true or false' });
}

/** Sessions of an agent, their events and inputs (`/v2/agents/{agent_key}/sessions`). */
@Controller('v2/agents/:agent_key/sessions')
export class SessionsController {
  constructor(
    private readonly sessions: Sessions,
    private readonly inputs: SessionInputs,
    private readonly feed: SessionFeed,
  ) {}

  @OpenApi({ body: CreateSessionDto, statuses: [409] })
  @Post()
  @Policy('agent.use')
  async create(@Param('agent_key') agentKey: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    validateBody(CreateSessionDto, body);
    res.status(201);
    return this.sessions.create(agentKey, body as CreateSessionDto, ctx);
  }

  @Get()
  @Policy('agent.view')
  async list(@Param('agent_key') agentKey: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('metadata_filter') metadataFilter?: string, @Query('filter') filter?: string) {
    if (metadataFilter && metadataFilter.length > 8000) throw invalid('request.invalid', 'metadata_filter is longer than 8000 characters', { metadata_filter: 'too long' });
    return this.sessions.list(agentKey, pageLimit(limit, 10, 100), pageKey, metadataFilter, listFilter(filter));
  }

  @Get(':session_key')
  @Policy('agent.session_read')
  async get(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Query('as_of') asOf?: string) {
    return this.sessions.get(agentKey, key, asOf);
  }

  @OpenApi({ body: UpdateSessionDto })
  @Patch(':session_key')
  @Policy('agent.develop')
  async update(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    validateBody(UpdateSessionDto, body);
    return this.sessions.update(agentKey, key, body as UpdateSessionDto, ctx);
  }

  @Delete(':session_key')
  @Policy('agent.develop')
  @HttpCode(204)
  async remove(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Ctx() ctx: CommandContext) {
    await this.sessions.remove(agentKey, key, ctx);
  }

  /**
   * An input: a JSON `AgentResponse` with the events it made (201), or with `stream_response` the events as
   * server-sent events as they happen, answer text in `streaming_agent_output` pieces, ending with `end`. Each
   * frame of a turn carries an `id:` a client can re-attach after (`GET …/stream`); a caller that goes away stops
   * nothing: the turn runs to its end (issue 43).
   */
  @OpenApi({ body: [InputMessageDto, InterruptDto, CompactDto, ToolOutputDto, ToolApprovalDto], form: { files: 'files', messages: InputMessageDto, message: 'string', metadata: 'json', stream_response: 'string', since: 'string', behavior: 'string' }, stream: true, status: 201, statuses: [409] })
  @Post(':session_key/events')
  @BodyLimit(50) // up to 100 messages of 1,000,000 characters
  @Policy('agent.use')
  async input(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Req() req: Request, @Res() res: Response, @Caller() caller: Principal) {
    if (req.is('multipart/form-data')) return this.uploadInput(agentKey, key, req, res, ctx);
    const type = (body as { type?: unknown } | null)?.type ?? 'input_message';
    const dto = INPUT_DTOS[type as keyof typeof INPUT_DTOS];
    if (!dto) throw invalid('request.invalid', `type must be one of ${Object.keys(INPUT_DTOS).join(', ')}`, { type: 'unknown input type' });
    if (type === 'input_message') validateInputMessage(body);
    else validateBody(dto as new () => object, body);
    const request = { ...(body as object), type, ...(type === 'tool_approval' ? { decider: approverOf(caller, agentKey) } : {}) } as InputRequest & { stream_response?: boolean };
    if (!request.stream_response) {
      const result = await this.inputs.input(agentKey, key, request, ctx);
      if (result.error && result.events.length === 0) throw result.error;
      res.status(201).json({ events: result.events, session_key: key, ...(result.error ? { error: { messages: [result.error.message] } } : {}) });
      return;
    }
    await this.sessions.active(agentKey, key);
    // 201: the input is created, as the reference lists for the streamed answer too.
    const stream = SseStream.open(res, undefined, 201);
    const sink = sseSink(stream, FULL_VIEW);
    const send = (event: Record<string, unknown>) => stream.send({ event: String(event.type), data: JSON.stringify(event) });
    try {
      const result = await this.inputs.input(agentKey, key, request, ctx, sink, true);
      if (result.error) send({ type: 'error', messages: [result.error.message], request_id: ctx.requestId });
    } catch (e) {
      send({ type: 'error', messages: [e instanceof DomainError ? e.message : 'Internal server error.'], request_id: ctx.requestId });
    } finally {
      stream.end(END_FRAME);
    }
  }

  /**
   * Files uploaded with an input (MultipartInputEvent): `files`, `metadata` (a JSON object for each artifact),
   * `messages` (JSON) or the deprecated `message`; stored as artifacts with one `artifact_upload` event, then the
   * messages, if any, are processed as an input.
   */
  private async uploadInput(agentKey: string, key: string, req: Request, res: Response, ctx: CommandContext): Promise<void> {
    await parseArtifacts(req, res);
    const files = (req.files as Express.Multer.File[] | undefined) ?? [];
    const form = (req.body ?? {}) as Record<string, unknown>;
    const unknown = Object.keys(form).filter((k) => !UPLOAD_FIELDS.includes(k));
    if (unknown.length) throw invalid('request.invalid', `Unknown form fields: ${unknown.join(', ')}`, Object.fromEntries(unknown.map((k) => [k, 'unknown field'])));
    if (!files.length) throw invalid('request.invalid', 'A multipart input needs at least one file in "files"', { files: 'required' });
    const metadata = jsonFormField(form, 'metadata') ?? {};
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw invalid('request.invalid', 'metadata must be a JSON object', { metadata: 'must be a JSON object' });
    const given = jsonFormField(form, 'messages');
    const legacy = typeof form.message === 'string' && form.message ? [{ type: 'text', content: form.message }] : undefined;
    const messages = given ?? legacy;
    const input = messages === undefined ? undefined : validateInputMessage({ messages, ...(form.since ? { since: form.since } : {}), ...(form.behavior ? { behavior: form.behavior } : {}) });
    await this.sessions.active(agentKey, key);
    const upload = await this.sessions.upload(agentKey, key, files.map((f) => ({ filename: f.originalname, mimeType: f.mimetype || 'application/octet-stream', bytes: f.buffer })), metadata as Record<string, unknown>, legacy && !given ? String(form.message) : undefined, ctx);
    if (!input) {
      res.status(201).json({ events: [upload], session_key: key });
      return;
    }
    const result = await this.inputs.input(agentKey, key, { type: 'input_message', messages: agentInputs(input.messages), ...(input.since ? { since: input.since } : {}), ...(input.behavior ? { behavior: input.behavior } : {}) }, ctx);
    res.status(201).json({ events: input.since ? result.events : [upload, ...result.events], session_key: key, ...(result.error ? { error: { messages: [result.error.message] } } : {}) });
  }

  @Get(':session_key/artifacts')
  @Policy('agent.view')
  async artifacts(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('metadata_filter') filter?: string, @Query('sort_by') sortBy?: string, @Query('order_by') orderBy?: string) {
    if (sortBy !== undefined && !['created_at', 'updated_at'].includes(sortBy)) throw invalid('request.invalid', 'sort_by must be created_at or updated_at', { sort_by: 'must be created_at or updated_at' });
    if (orderBy !== undefined && !['asc', 'desc'].includes(orderBy)) throw invalid('request.invalid', 'order_by must be asc or desc', { order_by: 'must be asc or desc' });
    if (filter && filter.length > 8000) throw invalid('request.invalid', 'metadata_filter is longer than 8000 characters', { metadata_filter: 'too long' });
    const offset = offsetOfPageKey(pageKey);
    const n = pageLimit(limit, 10, 100);
    const { page, more } = await this.sessions.artifacts(agentKey, key, { limit: n, offset, filter, descending: orderBy !== 'asc' });
    return { artifacts: page, metadata: more ? { page_key: offsetPageKey(offset + n) } : {} };
  }

  @Get(':session_key/artifacts/:artifact_id')
  @Policy('agent.view')
  async artifact(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Param('artifact_id') artifactId: string) {
    return this.sessions.artifact(agentKey, key, artifactId);
  }

  @Get(':session_key/events')
  @Policy('agent.view')
  async events(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('include_hidden') includeHidden?: string, @Query('as_of') asOf?: string) {
    const offset = offsetOfPageKey(pageKey);
    const n = pageLimit(limit, 10, 100);
    const { page, session, more } = await this.sessions.events(agentKey, key, { limit: n, offset, includeHidden: booleanParam('include_hidden', includeHidden), asOf });
    return { events: page.map((e) => ({ ...apiEventView(e, key, agentRevisionOf(session, e as SessionApiEvent)), ...(session.hidden.has(e.data.eventId) ? { hidden: true } : {}) })), metadata: more ? { page_key: offsetPageKey(offset + n) } : {} };
  }

  /**
   * The session's events as server-sent events: what is stored, then live as it is appended. Each carries its
   * stream revision as `id`, so a client that reconnects with `Last-Event-ID` resumes after it (a fork's
   * inherited history comes first, without ids). A turn running in this process adds what it streams to its
   * caller (answer pieces, their end, usage) with the same ids as the caller got them: a client re-attaching to a
   * running turn gets the answer so far, then the rest live; `until=turn_end` ends the stream with `end` once no
   * turn runs (docs/agents.md, "Re-attaching to a running turn").
   */
  @OpenApi({ stream: true })
  @Get(':session_key/stream')
  @Policy('agent.view')
  async stream(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Query('until') until: string | undefined, @Req() req: Request, @Res() res: Response) {
    const { streamId } = await this.sessions.active(agentKey, key);
    await followSession(this.feed, streamId, key, until, req, res, FULL_VIEW);
  }

  @Get(':session_key/outstanding_client_tool_calls')
  @Policy('agent.use')
  async outstanding(@Param('agent_key') agentKey: string, @Param('session_key') key: string) {
    return { client_tool_calls: await this.inputs.outstanding(agentKey, key) };
  }

  /** The tool calls the session waits to have approved (decided with a `tool_approval` input on the events route). */
  @Get(':session_key/pending_approvals')
  @Policy('agent.use')
  async pendingApprovals(@Param('agent_key') agentKey: string, @Param('session_key') key: string) {
    return { approvals: await this.inputs.pendingApprovals(agentKey, key) };
  }

  @Get(':session_key/events/:event_id')
  @Policy('agent.view')
  async event(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Param('event_id') eventId: string) {
    const { event, hidden, agentRevision } = await this.sessions.event(agentKey, key, eventId);
    return { ...apiEventView(event, key, agentRevision), ...(hidden ? { hidden: true } : {}) };
  }

  @Delete(':session_key/events/:event_id')
  @Policy('agent.administer')
  @HttpCode(204)
  async deleteEvent(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Param('event_id') eventId: string, @Ctx() ctx: CommandContext) {
    await this.sessions.changeEvent(agentKey, key, eventId, 'delete', ctx);
  }

  @Post(':session_key/events/:event_id/hide')
  @Policy('agent.develop')
  @HttpCode(200)
  async hide(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Param('event_id') eventId: string, @Ctx() ctx: CommandContext) {
    await this.sessions.changeEvent(agentKey, key, eventId, 'hide', ctx);
    return this.event(agentKey, key, eventId);
  }

  @Post(':session_key/events/:event_id/unhide')
  @Policy('agent.develop')
  @HttpCode(200)
  async unhide(@Param('agent_key') agentKey: string, @Param('session_key') key: string, @Param('event_id') eventId: string, @Ctx() ctx: CommandContext) {
    await this.sessions.changeEvent(agentKey, key, eventId, 'unhide', ctx);
    return this.event(agentKey, key, eventId);
  }
}
