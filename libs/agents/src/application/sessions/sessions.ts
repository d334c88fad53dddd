import { Inject, Injectable } from '@nestjs/common';
import { SecretBox } from '@lib/llms';
import { CommandContext, conflict, DomainError, FilterExpr, findMatching, ID_GENERATOR, IdGenerator, invalid, matchesFilter, notFound, parseFilter, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, type TextPattern } from '@lib/platform';
import { ActiveAgent, agentNotFound } from '../../domain/agent';
import { AgentConfig, CompactionConfig, effectiveCompaction } from '../../domain/agent-config';
import { apiEventView, ForkOrigin, ReplayOrigin, SessionApiEvent, SessionArtifactRecord, SessionCreator, SessionEvent, SessionFields } from '../../domain/session-events';
import { ArtifactStore } from './artifact-store';
import { SessionEnrichment } from './enrichment';
import { agentRevisionOf } from '../../domain/session-revisions';
import { ActiveSession, decideCreateSession, decideDeleteSession, decideEventChange, decideUpdateSession, requireSession, sessionStatus } from '../../domain/session';
import { SESSIONS, SessionRow, sessionRowId, sessionView } from '../../read-models';
import { AgentWriter } from '../agent-writer';
import { AgentRevisions } from '../revisions/agent-revisions';
import { compileCondition } from '../conditions';
import { SessionStore, sessionStream } from './session-store';
import { replayFields } from '../../domain/replay';

import type { SessionRequest } from '../runs/agent-runs.port';
export type { SessionRequest };

export type { ActiveAgent };

/** Sessions of an agent: create (fork), read, update, delete, and their events (list, get, hide, unhide, delete). */
@Injectable()
export class Sessions {
  constructor(
    private readonly agents: AgentWriter,
    readonly store: SessionStore,
    private readonly box: SecretBox,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly artifactStore: ArtifactStore,
    private readonly enrichment: SessionEnrichment,
    private readonly revisions: AgentRevisions,
  ) {}

  /** Read your writes: the session list shows a change once its answer has been given (bounded wait). */
  private async visible(position: number): Promise<void> {
    await this.progress.waitFor(position, ['agent_sessions'], this.config.readYourWritesTimeoutMs);
  }

  async agent(agentKey: string): Promise<ActiveAgent> {
    const state = await this.agents.state(agentKey);
    if (state.status === 'absent') throw agentNotFound(agentKey);
    return state;
  }

  /** Every row of the create-session table: nothing is appended unless every check passed. */
  async create(agentKey: string, req: SessionRequest, ctx: CommandContext, replay?: { readonly replayOf: ReplayOrigin; readonly forkedFrom?: ForkOrigin; readonly compaction?: CompactionConfig }): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    if (req.agent_revision !== undefined) await this.pinnedConfig(agent, req.agent_revision);
    if (!agent.config.enabled) throw invalid('session.agent_disabled', `Agent "${agentKey}" is disabled: enable it to create sessions`, { agent_key: 'disabled' });
    const key = req.key ?? `ses_${this.ids.uuid().replace(/-/g, '')}`;
    const name = req.name ?? key;
    if ((await this.load(agent, key)).state.status === 'active') throw invalid('session.key_taken', `No session created: the key "${key}" is already taken in agent "${agentKey}"; use another key`, { key: 'already taken' });
    const sameName = await this.reads.find<SessionRow>(SESSIONS, { where: [{ field: 'agent_id', op: 'eq', value: agent.agentId }, { field: 'name', op: 'eq', value: name }], limit: 1 });
    if (sameName.items.length) throw invalid('session.name_taken', `No session created: the name "${name}" is already taken in agent "${agentKey}"; use another name`, { name: 'already taken' });
    let fields: SessionFields = { name, ...(req.description !== undefined ? { description: req.description } : {}), metadata: req.metadata ?? {}, enabled: req.enabled ?? true, ttiMinutes: req.tti_minutes ?? 0 };
    // A replay re-runs a session that passed these once: its metadata already holds what enrichment added.
    if (!replay) checkRunCondition(agent.config, agentKey, key, fields, ctx.now);
    const enriched = replay ? {} : await this.enrichment.run(agent, key, fields, req.secrets ?? {}, ctx.actor);
    if (Object.keys(enriched).length) fields = { ...fields, metadata: { ...fields.metadata, ...enriched } };
    const forkedFrom = replay ? replay.forkedFrom : req.from_session ? await this.forkOrigin(agent, req.from_session) : undefined;
    const secrets = req.secrets && Object.keys(req.secrets).length ? this.seal(agent.agentId, key, req.secrets) : undefined;
    const { position } = await this.store.write(agent.agentId, key, (s) => decideCreateSession(s, { agentId: agent.agentId, agentKey, sessionKey: key, fields, secrets, forkedFrom, compaction: replay?.compaction ?? effectiveCompaction(agent.config), createdBy: req.created_by, aliasKey: req.alias_key, endUser: req.end_user, agentRevision: req.agent_revision, replayOf: replay?.replayOf }, ctx.now), ctx);
    await this.visible(position);
    return this.get(agentKey, key);
  }

  private async forkOrigin(agent: ActiveAgent, from: NonNullable<SessionRequest['from_session']>): Promise<ForkOrigin> {
    const sourceAgent = from.agent_key && from.agent_key !== agent.key ? await this.agent(from.agent_key).catch(() => undefined) : agent;
    if (!sourceAgent) throw invalid('session.invalid_fork', `from_session.agent_key "${from.agent_key}" names no agent`, { 'from_session.agent_key': 'no such agent' });
    const source = await this.load(sourceAgent, from.session_key);
    if (source.state.status === 'absent') throw invalid('session.invalid_fork', `from_session.session_key "${from.session_key}" names no session of agent "${sourceAgent.key}"`, { 'from_session.session_key': 'no such session' });
    let upToPosition = source.position;
    if (from.include_up_to_event_id) {
      const at = await this.positionOf(source.streamId, from.include_up_to_event_id);
      if (at === undefined) throw invalid('session.invalid_fork', `from_session.include_up_to_event_id "${from.include_up_to_event_id}" is not an event of session "${from.session_key}"`, { 'from_session.include_up_to_event_id': 'not an event of the session' });
      upToPosition = at;
    }
    return { streamId: source.streamId, agentKey: sourceAgent.key, sessionKey: from.session_key, upToPosition };
  }

  /** The log position of an API event: in the session's own stream, or in the history a fork reads. */
  private async positionOf(streamId: string, eventId: string, depth = 0): Promise<number | undefined> {
    const events = await this.store.readRaw(streamId);
    const hit = events.find((e) => (e.data as { eventId?: string }).eventId === eventId && !/Hidden|Unhidden|Deleted$/.test(e.type));
    if (hit) return hit.position;
    const first = events[0]?.data as { forkedFrom?: ForkOrigin } | undefined;
    if (!first?.forkedFrom || depth > 32) return undefined;
    const inParent = await this.positionOf(first.forkedFrom.streamId, eventId, depth + 1);
    return inParent !== undefined && inParent <= first.forkedFrom.upToPosition ? inParent : undefined;
  }

  private seal(agentId: string, key: string, secrets: Record<string, string>) {
    return { names: Object.keys(secrets).sort(), sealed: this.box.seal(secrets, `session-secrets:${agentId}.${key}`) as unknown as Record<string, string> };
  }

  /** Session secrets in clear, for `{"$ref": "session.secrets.<name>"}` in tool arguments. */
  openSecrets(session: ActiveSession): Record<string, string> {
    if (!session.sealedSecrets) return {};
    return this.box.open(session.sealedSecrets as never, `session-secrets:${session.agentId}.${session.key}`);
  }

  /** Who created a session, when it exists (`{}` for a session no sub_agent tool made); undefined when it does not. */
  async exists(agentKey: string, key: string): Promise<Partial<SessionCreator> | undefined> {
    const loaded = await this.load(await this.agent(agentKey), key);
    return loaded.state.status === 'active' ? { ...loaded.state.createdBy } : undefined;
  }

  load(agent: ActiveAgent, key: string) {
    return this.store.load(agent.agentId, key);
  }

  /** The session, and the agent as its turns run it: a pinned session's revision (`agent_revision`), else the current. */
  async active(agentKey: string, key: string): Promise<{ agent: ActiveAgent; session: ActiveSession; revision: number; streamId: string }> {
    const current = await this.agent(agentKey);
    const loaded = await this.load(current, key);
    const session = requireSession(loaded.state, agentKey, key);
    const agent = session.agentRevision === undefined || session.agentRevision === current.revision ? current : { ...current, config: await this.revisions.configAt(agentKey, session.agentRevision, current.agentId), revision: session.agentRevision };
    return { agent, session, revision: loaded.revision, streamId: loaded.streamId };
  }

  /** A revision's configuration to pin; 400 on `agent_revision` when the agent has no such revision. */
  async pinnedConfig(agent: ActiveAgent, revision: number): Promise<AgentConfig> {
    try {
      return await this.revisions.configAt(agent.key, revision, agent.agentId);
    } catch (e) {
      if (e instanceof DomainError && e.kind === 'not_found') throw invalid('session.invalid_agent_revision', `agent_revision ${revision} is not a revision of agent "${agent.key}" (it has ${agent.revision + 1}: 0 to ${agent.revision})`, { agent_revision: 'no such revision' });
      throw e;
    }
  }

  /** The session as the reference shows it; `asOf` (an event id) shows it as it was just after that event. */
  async get(agentKey: string, key: string, asOf?: string): Promise<Record<string, unknown>> {
    const { agent, session } = await this.active(agentKey, key);
    if (asOf) {
      const past = await this.asOf(agent, key, asOf);
      return sessionView({ ...rowOf(past), ...liveFields(past) }, { as_of: asOf, ...replayFields(past) });
    }
    const row = await this.reads.get<SessionRow>(SESSIONS, sessionRowId(agent.agentId, key));
    return sessionView({ ...(row ?? rowOf(session)), ...liveFields(session) }, replayFields(session));
  }

  /** The session folded up to an event of its history (404 for an id it does not hold). */
  private async asOf(agent: ActiveAgent, key: string, eventId: string): Promise<ActiveSession> {
    const past = await this.store.load(agent.agentId, key, eventId);
    if (!past || past.state.status !== 'active') throw notFound('session.event_not_found', `Event "${eventId}" is not in session "${key}"`, eventId);
    return past.state;
  }

  async list(agentKey: string, limit: number, pageKey?: string, metadataFilter?: string, filter?: TextPattern): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    let metadata;
    if (metadataFilter) {
      try {
        metadata = { filter: parseFilter(metadataFilter), docField: 'metadata' };
      } catch (e) {
        if (e instanceof DomainError) throw invalid('request.invalid', `Invalid metadata_filter: ${e.message}`, { metadata_filter: e.message });
        throw e;
      }
    }
    const where = [{ field: 'agent_id', op: 'eq' as const, value: agent.agentId }];
    const page = filter
      ? await findMatching<SessionRow>(this.reads, SESSIONS, { where, limit, pageKey }, (r) => filter.test(r.name) || filter.test(r.description ?? ''))
      : await this.reads.find<SessionRow>(SESSIONS, { where, metadata, limit, pageKey });
    return { sessions: page.items.map((r) => sessionView(r)), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  async update(agentKey: string, key: string, req: Omit<SessionRequest, 'key' | 'from_session'>, ctx: CommandContext): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    if (req.name !== undefined) {
      const same = await this.reads.find<SessionRow>(SESSIONS, { where: [{ field: 'agent_id', op: 'eq', value: agent.agentId }, { field: 'name', op: 'eq', value: req.name }], limit: 1 });
      if (same.items.some((r) => r.key !== key)) throw invalid('session.name_taken', `The name "${req.name}" is already taken in agent "${agentKey}"`, { name: 'already taken' });
    }
    const changes: Partial<SessionFields> = { name: req.name, description: req.description, metadata: req.metadata, enabled: req.enabled, ttiMinutes: req.tti_minutes };
    const secrets = req.secrets ? this.seal(agent.agentId, key, req.secrets) : undefined;
    const { position } = await this.store.write(agent.agentId, key, (s) => decideUpdateSession(s, agentKey, key, changes, secrets, ctx.now), ctx);
    await this.visible(position);
    return this.get(agentKey, key);
  }

  async remove(agentKey: string, key: string, ctx: CommandContext): Promise<void> {
    const agent = await this.agent(agentKey);
    const { position } = await this.store.write(agent.agentId, key, (s) => decideDeleteSession(s, agentKey, key, ctx.now), ctx);
    await this.visible(position);
  }

  /** API events in order; hidden ones only with `includeHidden`; `asOf` stops at that event. Paged by offset. */
  async events(agentKey: string, key: string, opts: { limit: number; offset: number; includeHidden: boolean; asOf?: string }) {
    const { agent, session: now } = await this.active(agentKey, key);
    // As of an event: the events, and which were hidden, as they stood just after it.
    const session = opts.asOf ? await this.asOf(agent, key, opts.asOf) : now;
    const all = session.events;
    // `client_tool_pending` goes to the live stream only; the outstanding calls endpoint is its durable form.
    const visible = all.filter((e) => e.type !== 'SessionClientToolPending' && (opts.includeHidden || !session.hidden.has(e.data.eventId)));
    const page = visible.slice(opts.offset, opts.offset + opts.limit);
    return { page, session, more: opts.offset + opts.limit < visible.length };
  }

  async event(agentKey: string, key: string, eventId: string) {
    const { session } = await this.active(agentKey, key);
    const e = session.events.find((x) => x.data.eventId === eventId);
    if (!e) throw notFound('session.event_not_found', `Event "${eventId}" is not in session "${key}"`, eventId);
    return { event: e, hidden: session.hidden.has(eventId), agentRevision: agentRevisionOf(session, e) };
  }

  /** Stores uploaded files as artifacts of the session and records one `artifact_upload` event. */
  async upload(agentKey: string, key: string, files: readonly { filename: string; mimeType: string; bytes: Buffer }[], metadata: Record<string, unknown>, message: string | undefined, ctx: CommandContext): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    requireSession((await this.load(agent, key)).state, agentKey, key);
    const artifacts: SessionArtifactRecord[] = [];
    for (const f of files) {
      const sha256 = await this.artifactStore.put(f.bytes);
      artifacts.push({ artifactId: `art_${this.ids.uuid()}`, filename: f.filename, mimeType: f.mimeType, sizeBytes: f.bytes.length, sha256, metadata });
    }
    const event: SessionEvent = { type: 'SessionArtifactUploaded', data: { eventId: `aev_${this.ids.uuid()}`, artifacts, ...(message ? { message } : {}), createdAt: ctx.now.toISOString() } };
    await this.store.write(agent.agentId, key, (s) => (requireSession(s, agentKey, key), [event]), ctx);
    return apiEventView(event as SessionApiEvent, key);
  }

  /** A session's artifacts, filtered by `metadata_filter` over their metadata, sorted, paged by offset. */
  async artifacts(agentKey: string, key: string, opts: { limit: number; offset: number; filter?: string; descending: boolean }) {
    const { session } = await this.active(agentKey, key);
    let expr: FilterExpr | undefined;
    if (opts.filter) {
      try {
        expr = parseFilter(opts.filter);
      } catch (e) {
        if (e instanceof DomainError) throw invalid('request.invalid', `Invalid metadata_filter: ${e.message}`, { metadata_filter: e.message });
        throw e;
      }
    }
    // Artifacts never change once uploaded: created_at and updated_at order them alike, and upload order breaks ties.
    const all = session.artifacts.filter((a) => !expr || matchesFilter(expr, { doc: a.metadata }));
    if (opts.descending) all.reverse();
    return { page: all.slice(opts.offset, opts.offset + opts.limit).map(artifactView), more: opts.offset + opts.limit < all.length };
  }

  async artifact(agentKey: string, key: string, artifactId: string): Promise<Record<string, unknown>> {
    const { session } = await this.active(agentKey, key);
    const found = session.artifacts.find((a) => a.artifactId === artifactId);
    if (!found) throw notFound('artifact.not_found', `Artifact "${artifactId}" is not in session "${key}"`, artifactId);
    return { ...artifactView(found), data: (await this.artifactStore.get(found.sha256)).toString('base64') };
  }

  async changeEvent(agentKey: string, key: string, eventId: string, change: 'hide' | 'unhide' | 'delete', ctx: CommandContext): Promise<void> {
    const agent = await this.agent(agentKey);
    await this.store.write(agent.agentId, key, (s) => decideEventChange(s, agentKey, key, eventId, change, ctx.now), ctx);
  }
}

/** The reference's SessionArtifact, without its data. */
function artifactView(a: SessionArtifactRecord & { createdAt: string }): Record<string, unknown> {
  return { artifact_id: a.artifactId, filename: a.filename, mime_type: a.mimeType, size_bytes: a.sizeBytes, checksum_sha256: a.sha256, metadata: a.metadata, created_at: a.createdAt, updated_at: a.createdAt };
}

/** A false `run_condition` refuses the session (409); anything but a boolean is a 422. */
function checkRunCondition(config: AgentConfig, agentKey: string, key: string, fields: SessionFields, now: Date): void {
  if (!config.run_condition) return;
  const context = { agent: { key: agentKey, name: config.name, description: config.description ?? '', metadata: config.metadata }, session: { key, name: fields.name, description: fields.description ?? '', metadata: fields.metadata }, currentDate: now.toISOString() };
  let value: unknown;
  try {
    value = compileCondition(config.run_condition, 'run_condition')(context);
  } catch (e) {
    throw new DomainError('unprocessable', 'session.run_condition_failed', `No session created: the agent's run_condition failed: ${(e as Error).message}`);
  }
  if (typeof value !== 'boolean') throw new DomainError('unprocessable', 'session.run_condition_not_boolean', `No session created: the agent's run_condition returned ${JSON.stringify(value) ?? 'undefined'}, not a boolean`);
  if (!value) throw conflict('session.run_condition_false', `No session created: the agent's run_condition is false for this session (it reads the session's metadata; retry once it holds)`);
}

/** The fields only the stream knows at once (a turn may have ended before the projection caught up). */
function liveFields(s: ActiveSession): Partial<SessionRow> {
  return { ...(s.aliasKey ? { alias_key: s.aliasKey } : {}), ...(s.endUser ? { end_user: s.endUser } : {}), ...(s.compaction ? { effective_compaction: s.compaction } : {}), ...(s.createdBy ? { created_by_agent_key: s.createdBy.agentKey, created_by_session_key: s.createdBy.sessionKey } : {}), status: sessionStatus(s), input_tokens: s.usage.input_tokens, output_tokens: s.usage.output_tokens, ...(s.turn?.step ?? s.currentStep ? { current_step_name: s.turn?.step ?? s.currentStep } : {}), name: s.fields.name, metadata: s.fields.metadata, enabled: s.fields.enabled, tti_minutes: s.fields.ttiMinutes, secret_names: s.secretNames, updated_at: s.updatedAt };
}

function rowOf(s: ActiveSession): SessionRow {
  return {
    id: sessionRowId(s.agentId, s.key),
    agent_id: s.agentId,
    agent_key: s.agentKey,
    key: s.key,
    name: s.fields.name,
    ...(s.fields.description !== undefined ? { description: s.fields.description } : {}),
    metadata: s.fields.metadata,
    enabled: s.fields.enabled,
    tti_minutes: s.fields.ttiMinutes,
    status: sessionStatus(s),
    secret_names: s.secretNames,
    input_tokens: s.usage.input_tokens,
    output_tokens: s.usage.output_tokens,
    turns: s.turns,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

export { sessionStream };
