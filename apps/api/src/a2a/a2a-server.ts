import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request, RequestHandler, Response } from 'express';
import { Inject, Injectable } from '@nestjs/common';
import { AgentCard, Message, Part, Task, TaskState } from '@a2a-js/sdk';
import { AgentEvent, AgentExecutor, DefaultRequestHandler, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { agentCardHandler, restHandler } from '@a2a-js/sdk/server/express';
import { Actor, CommandContext, DomainError, EVENT_STORE, EventStore, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, streamId, toNewEvents } from '@lib/platform';
import { AGENT_RUNS, AgentConfig, AgentRuns, AGENTS, AgentRow, apiEventView, NO_SINK, SessionApiEvent, TurnSink } from '@lib/agents';
import { A2aTaskBounds, DEFAULT_A2A_TASK_BOUNDS, ScopedTaskStore } from './a2a-task-store';

/** The request an A2A call serves: who calls (its command context) and on which agent. */
interface CallScope {
  readonly ctx: CommandContext;
  readonly agentKey: string;
}

const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' }) as unknown as Part;
const now = () => new Date().toISOString();

/** The principal a task belongs to: the same person through any of their keys (`via` is left out). */
const ownerKey = (actor: Actor): string => `${actor.type}:${actor.id}`;

/** An A2A context id as a session key (the reference's session key pattern, at most 50 characters). */
export const a2aSessionKey = (contextId: string): string => `a2a-${contextId.replace(/[^0-9a-zA-Z_-]/g, '').slice(0, 46)}`;

/**
 * The agent-to-agent protocol per agent (docs/a2a.md), built on the official `@a2a-js/sdk`: its request handler
 * and its Express transport (HTTP+JSON in v1, and the v0.3 compatibility layer), behind the service's own auth.
 * A task is one input turn of a session: the A2A `contextId` names the session (`a2a-<contextId>`), the task id
 * is the input's `external_id`, and the answer is the task's artifact.
 */
@Injectable()
export class A2aServer {
  private readonly scope = new AsyncLocalStorage<CallScope>();
  private readonly agents = new Map<string, { revision: string; rest: RequestHandler; card: RequestHandler }>();
  /** Running turns by task id, so that a cancel interrupts the right session. */
  private readonly running = new Map<string, { agentKey: string; sessionKey: string; ctx: CommandContext }>();
  /** Each agent's tasks, kept across rebuilds of its handlers (an edit of the agent keeps its running tasks). */
  private readonly stores = new Map<string, ScopedTaskStore>();
  private readonly bounds: A2aTaskBounds;

  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(AGENT_RUNS) private readonly runs: AgentRuns,
    @Inject(SERVICE_CONFIG) config: ServiceConfig,
  ) {
    this.bounds = a2aTaskBounds(config.env);
  }

  /** What the task stores hold in memory, all agents together (tests check the bounds with it). */
  heldTasks(): { tasks: number; live: number; bytes: number } {
    const all = { tasks: 0, live: 0, bytes: 0 };
    for (const store of this.stores.values()) {
      const s = store.stats();
      all.tasks += s.tasks;
      all.live += s.live;
      all.bytes += s.bytes;
    }
    return all;
  }

  /** Serves one A2A request: `kind` card (v0.3 unless the request asks v1), card-v1, or the REST surface. */
  async handle(agentKey: string, baseUrl: string, kind: 'card' | 'card-v1' | 'rest', req: Request, res: Response, ctx: CommandContext): Promise<void> {
    const row = await this.reads.get<AgentRow>(AGENTS, agentKey);
    if (!row) throw new DomainError('not_found', 'agent.not_found', `Agent "${agentKey}" does not exist`);
    const handlers = this.handlersFor(row, baseUrl);
    if (kind === 'card-v1') req.headers['a2a-version'] = '1.0';
    await new Promise<void>((resolve, reject) => {
      res.once('finish', () => resolve());
      res.once('close', () => resolve());
      this.scope.run({ ctx, agentKey }, () => (kind === 'rest' ? handlers.rest : handlers.card)(req, res, (err?: unknown) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : (res.headersSent ? resolve() : reject(new DomainError('not_found', 'a2a.not_found', `No A2A operation at ${req.method} ${req.url}`))))));
    });
  }

  private handlersFor(row: AgentRow, baseUrl: string) {
    const revision = `${row.updated_at ?? ''}|${baseUrl}`;
    const cached = this.agents.get(row.id);
    if (cached && cached.revision === revision) return cached;
    const card = agentCard(row.id, row.config, baseUrl);
    let store = this.stores.get(row.id);
    if (!store) this.stores.set(row.id, (store = new ScopedTaskStore((taskId, owner) => this.taskFromLog(row.id, taskId, owner), this.bounds)));
    const handler = new DefaultRequestHandler(card, store, this.executor(row.id));
    // The SDK scopes tasks by the user this returns: the caller the service authenticated.
    const userBuilder = async () => {
      const scope = this.scope.getStore();
      if (!scope) throw new Error('an A2A call outside a request');
      const userName = ownerKey(scope.ctx.actor);
      return { isAuthenticated: true, userName };
    };
    const built = {
      revision,
      rest: restHandler({ requestHandler: handler, userBuilder, legacyCompat: { enabled: true } }),
      card: agentCardHandler({ agentCardProvider: { getAgentCard: async () => card } as never, legacyCompat: { enabled: true } } as never),
    };
    this.agents.set(row.id, built);
    return built;
  }

  /** Which session a task's turn is in: one event per task (`a2a_task-<task id>`), so a task outlives this process. */
  private async recordTask(agentKey: string, taskId: string, contextId: string, sessionKey: string, ctx: CommandContext): Promise<void> {
    const stream = streamId('a2a_task', taskId);
    await this.events.append(stream, toNewEvents([{ type: 'A2ATaskStarted', data: { taskId, contextId, agentKey, sessionKey, startedAt: ctx.now.toISOString() } }], ctx, stream, 1), { expectedRevision: 'no_stream' }).catch(() => undefined);
  }

  /**
   * A task this process does not hold, from the log: its session's events after the input it made (external id
   * `a2a:<task id>`) say how it ended — the answer (completed), an interruption (canceled), a client tool call or
   * a tool approval waiting (input-required), an error (failed), or nothing yet (working).
   */
  private async taskFromLog(agentKey: string, taskId: string, owner: string): Promise<Task | undefined> {
    const recorded = (await this.events.readStream(streamId('a2a_task', taskId)))[0];
    const started = recorded?.data as { contextId: string; agentKey: string; sessionKey: string } | undefined;
    // Another caller's task is unknown to this one, as if it never was.
    if (!started || started.agentKey !== agentKey || ownerKey(recorded.metadata.actor) !== owner) return undefined;
    let events: Record<string, unknown>[];
    try {
      events = (await this.runs.events(agentKey, started.sessionKey, { limit: 100_000, offset: 0, includeHidden: true })).page.map((e) => apiEventView(e as SessionApiEvent, started.sessionKey));
    } catch {
      return undefined;
    }
    const at = events.findIndex((e) => e.type === 'input_message' && e.external_id === `a2a:${taskId}`);
    if (at < 0) return undefined;
    const after = events.slice(at + 1);
    const nextInput = after.findIndex((e) => e.type === 'input_message');
    const turn = nextInput < 0 ? after : after.slice(0, nextInput);
    const answer = [...turn].reverse().find((e) => e.type === 'agent_output');
    const input = events[at] as { messages?: { content?: string }[] };
    const userMessage = { messageId: `${taskId}-input`, contextId: started.contextId, taskId, role: 1, parts: (input.messages ?? []).map((m) => text(m.content ?? '')), metadata: undefined, extensions: [], referenceTaskIds: [] };
    const state = answer ? TaskState.TASK_STATE_COMPLETED : turn.some((e) => e.type === 'session_interrupted') ? TaskState.TASK_STATE_CANCELED : turn.some((e) => (e.type === 'tool_input' && (e as { tool_name?: string }).tool_name === 'client') || e.type === 'tool_approval_requested') ? TaskState.TASK_STATE_INPUT_REQUIRED : turn.some((e) => e.type === 'error') ? TaskState.TASK_STATE_FAILED : TaskState.TASK_STATE_WORKING;
    const artifacts = answer ? [{ artifactId: `${taskId}-answer`, name: 'answer', description: "The agent's answer", parts: [text(String(answer.content ?? ''))], metadata: undefined, extensions: [] }] : [];
    return { id: taskId, contextId: started.contextId, status: { state, message: undefined, timestamp: String((answer ?? events[at]).created_at ?? now()) }, artifacts, history: [userMessage], metadata: { session_key: started.sessionKey } } as unknown as Task;
  }

  /** Whether the session of an A2A context was created by this caller (its first event's actor). */
  private async contextIsCallers(agentKey: string, sessionKey: string, ctx: CommandContext): Promise<boolean> {
    const { streamId: stream } = await this.runs.active(agentKey, sessionKey);
    const first = (await this.events.readStream(stream, { maxCount: 1 }))[0];
    return first !== undefined && ownerKey(first.metadata.actor) === ownerKey(ctx.actor);
  }

  private executor(agentKey: string): AgentExecutor {
    return {
      execute: async (rc: RequestContext, bus: ExecutionEventBus) => {
        const scope = this.scope.getStore();
        if (!scope) throw new Error('an A2A call outside a request');
        const sessionKey = a2aSessionKey(rc.contextId);
        const base = { taskId: rc.taskId, contextId: rc.contextId, metadata: undefined };
        const status = (state: TaskState, message?: Message) => ({ state, message, timestamp: now() });
        const task: Task = rc.task ?? ({ id: rc.taskId, contextId: rc.contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [rc.userMessage], metadata: { session_key: sessionKey } } as unknown as Task);
        bus.publish(AgentEvent.task(task));
        await this.recordTask(agentKey, rc.taskId, rc.contextId, sessionKey, scope.ctx);
        try {
          await this.runs.create(agentKey, { key: sessionKey, metadata: { a2a_context_id: rc.contextId } }, scope.ctx);
        } catch (e) {
          if (!(e instanceof DomainError && e.code === 'session.key_taken')) throw e;
          // A context is its creator's: another caller naming it would read and extend their conversation.
          if (!(await this.contextIsCallers(agentKey, sessionKey, scope.ctx))) {
            const refused = { messageId: `${rc.taskId}-error`, contextId: rc.contextId, taskId: rc.taskId, role: 2, parts: [text(`context ${rc.contextId} is not one of this caller's`)], metadata: undefined, extensions: [], referenceTaskIds: [] } as unknown as Message;
            bus.publish(AgentEvent.statusUpdate({ ...base, status: status(TaskState.TASK_STATE_REJECTED, refused) } as never));
            bus.finished();
            return;
          }
        }
        bus.publish(AgentEvent.statusUpdate({ ...base, status: status(TaskState.TASK_STATE_WORKING) } as never));
        const content = rc.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).filter(Boolean).join('\n');
        this.running.set(rc.taskId, { agentKey, sessionKey, ctx: scope.ctx });
        let answer = '';
        const sink: TurnSink = {
          ...NO_SINK,
          event: (view) => {
            if (view.type === 'agent_output' && typeof view.content === 'string') answer = view.content;
          },
        };
        try {
          const result = await this.runs.input(agentKey, sessionKey, { type: 'input_message', messages: [{ type: 'text', content: content || '(empty message)' }], external_id: `a2a:${rc.taskId}` }, scope.ctx, sink, true);
          for (const e of result.events) if (e.type === 'agent_output' && typeof e.content === 'string') answer = e.content;
          const interrupted = result.events.some((e) => e.type === 'session_interrupted');
          if (interrupted) {
            bus.publish(AgentEvent.statusUpdate({ ...base, status: status(TaskState.TASK_STATE_CANCELED) } as never));
          } else if (result.outcome === 'approval' || (await this.runs.outstanding(agentKey, sessionKey)).length) {
            // A client tool call or a tool call waiting for a person's approval: the task needs input to go on.
            bus.publish(AgentEvent.statusUpdate({ ...base, status: status(TaskState.TASK_STATE_INPUT_REQUIRED) } as never));
          } else {
            bus.publish(AgentEvent.artifactUpdate({ ...base, artifact: { artifactId: `${rc.taskId}-answer`, name: 'answer', description: 'The agent\'s answer', parts: [text(answer)], metadata: undefined, extensions: [] }, append: false, lastChunk: true } as never));
            const reply = { messageId: `${rc.taskId}-reply`, contextId: rc.contextId, taskId: rc.taskId, role: 2, parts: [text(answer)], metadata: undefined, extensions: [], referenceTaskIds: [] } as unknown as Message;
            bus.publish(AgentEvent.statusUpdate({ ...base, status: status(TaskState.TASK_STATE_COMPLETED, reply) } as never));
          }
        } catch (e) {
          const reason = e instanceof DomainError ? e.message : 'the agent failed';
          const failure = { messageId: `${rc.taskId}-error`, contextId: rc.contextId, taskId: rc.taskId, role: 2, parts: [text(reason)], metadata: undefined, extensions: [], referenceTaskIds: [] } as unknown as Message;
          bus.publish(AgentEvent.statusUpdate({ ...base, status: status(TaskState.TASK_STATE_FAILED, failure) } as never));
        } finally {
          this.running.delete(rc.taskId);
          bus.finished();
        }
      },
      cancelTask: async (taskId: string, bus: ExecutionEventBus) => {
        const turn = this.running.get(taskId);
        if (turn) await this.runs.input(turn.agentKey, turn.sessionKey, { type: 'interrupt' }, turn.ctx).catch(() => undefined);
        const contextId = turn ? turn.sessionKey : '';
        bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() } } as never));
        bus.finished();
      },
    };
  }
}

/** The agent's card: its name and description, one skill per step's purpose, the service's auth schemes. */
export function agentCard(agentKey: string, config: AgentConfig, baseUrl: string): AgentCard {
  const skills = [{ id: agentKey, name: config.name, description: config.description ?? `Talk to ${config.name}`, tags: ['agent'], examples: [], inputModes: ['text/plain'], outputModes: ['text/plain'], securityRequirements: [] }];
  return {
    name: config.name,
    description: config.description ?? `The agent ${agentKey}`,
    supportedInterfaces: [
      { url: baseUrl, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
      { url: baseUrl, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '0.3' },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      api_key: { scheme: { $case: 'apiKeySecurityScheme', value: { description: 'An API key of this service', location: 'header', name: 'x-api-key' } } },
      oauth2: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'An OAuth 2.0 client-credentials token from /oauth/token', scheme: 'Bearer', bearerFormat: 'JWT' } } },
    },
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills,
    signatures: [],
  } as unknown as AgentCard;
}

/** The bounds of what the task stores keep (A2A_TASKS_PER_CALLER, A2A_TASKS_PER_AGENT; docs/a2a.md). */
function a2aTaskBounds(env: Readonly<Record<string, string | undefined>>): A2aTaskBounds {
  const int = (name: string, fallback: number) => {
    const n = Number(env[name]);
    return env[name] !== undefined && Number.isInteger(n) && n >= 1 ? n : fallback;
  };
  return { ...DEFAULT_A2A_TASK_BOUNDS, perCaller: int('A2A_TASKS_PER_CALLER', DEFAULT_A2A_TASK_BOUNDS.perCaller), perAgent: int('A2A_TASKS_PER_AGENT', DEFAULT_A2A_TASK_BOUNDS.perAgent) };
}
