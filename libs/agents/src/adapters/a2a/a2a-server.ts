import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request, RequestHandler, Response } from 'express';
import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AgentCard, Message, Part, Task, TaskState } from '@a2a-js/sdk';
import { AgentEvent, AgentExecutor, DefaultRequestHandler, ExecutionEventBus, InMemoryTaskStore, RequestContext, ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { CommandContext, DomainError, EVENT_STORE, EventStore, READ_STORE, ReadStore, streamId, toNewEvents } from '@lib/platform';
import { apiEventView, SessionApiEvent } from '../../domain/session-events';
import type { AgentConfig } from '../../domain/agent-config';
import { AGENTS, AgentRow } from '../../read-models';
import { Sessions } from '../../application/sessions/sessions';
import { SessionInputs } from '../../application/turn/session-inputs';
import { NO_SINK, TurnSink } from '../../application/turn/turn-sink';

/** The request an A2A call serves: who calls (its command context) and on which agent. */
interface CallScope {
  readonly ctx: CommandContext;
  readonly agentKey: string;
}

const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' }) as unknown as Part;
const now = () => new Date().toISOString();

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

  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    private readonly modules: ModuleRef,
  ) {}

  private get sessions(): Sessions {
    return this.modules.get(Sessions, { strict: false });
  }

  private get inputs(): SessionInputs {
    return this.modules.get(SessionInputs, { strict: false });
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
    const handler = new DefaultRequestHandler(card, new SessionTaskStore(new InMemoryTaskStore(), (taskId) => this.taskFromLog(row.id, taskId)), this.executor(row.id));
    const built = {
      revision,
      rest: restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }),
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
   * `a2a:<task id>`) say how it ended — the answer (completed), an interruption (canceled), a client tool call
   * waiting (input-required), an error (failed), or nothing yet (working).
   */
  private async taskFromLog(agentKey: string, taskId: string): Promise<Task | undefined> {
    const started = (await this.events.readStream(streamId('a2a_task', taskId)))[0]?.data as { contextId: string; agentKey: string; sessionKey: string } | undefined;
    if (!started || started.agentKey !== agentKey) return undefined;
    let events: Record<string, unknown>[];
    try {
      events = (await this.sessions.events(agentKey, started.sessionKey, { limit: 100_000, offset: 0, includeHidden: true })).page.map((e) => apiEventView(e as SessionApiEvent, started.sessionKey));
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
    const state = answer ? TaskState.TASK_STATE_COMPLETED : turn.some((e) => e.type === 'session_interrupted') ? TaskState.TASK_STATE_CANCELED : turn.some((e) => e.type === 'tool_input' && (e as { tool_name?: string }).tool_name === 'client') ? TaskState.TASK_STATE_INPUT_REQUIRED : turn.some((e) => e.type === 'error') ? TaskState.TASK_STATE_FAILED : TaskState.TASK_STATE_WORKING;
    const artifacts = answer ? [{ artifactId: `${taskId}-answer`, name: 'answer', description: "The agent's answer", parts: [text(String(answer.content ?? ''))], metadata: undefined, extensions: [] }] : [];
    return { id: taskId, contextId: started.contextId, status: { state, message: undefined, timestamp: String((answer ?? events[at]).created_at ?? now()) }, artifacts, history: [userMessage], metadata: { session_key: started.sessionKey } } as unknown as Task;
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
          await this.sessions.create(agentKey, { key: sessionKey, metadata: { a2a_context_id: rc.contextId } }, scope.ctx);
        } catch (e) {
          if (!(e instanceof DomainError && e.code === 'session.key_taken')) throw e;
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
          const result = await this.inputs.input(agentKey, sessionKey, { type: 'input_message', messages: [{ type: 'text', content: content || '(empty message)' }], external_id: `a2a:${rc.taskId}` }, scope.ctx, sink, true);
          for (const e of result.events) if (e.type === 'agent_output' && typeof e.content === 'string') answer = e.content;
          const interrupted = result.events.some((e) => e.type === 'session_interrupted');
          if (interrupted) {
            bus.publish(AgentEvent.statusUpdate({ ...base, status: status(TaskState.TASK_STATE_CANCELED) } as never));
          } else if ((await this.inputs.outstanding(agentKey, sessionKey)).length) {
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
        if (turn) await this.inputs.input(turn.agentKey, turn.sessionKey, { type: 'interrupt' }, turn.ctx).catch(() => undefined);
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

/**
 * Tasks this process runs are held in memory (the SDK's store, which keeps them current as events arrive); any
 * other task is rebuilt from the log (`fallback`), so `tasks/{id}` answers after a restart or on another process.
 */
class SessionTaskStore implements TaskStore {
  constructor(
    private readonly live: InMemoryTaskStore,
    private readonly fallback: (taskId: string) => Promise<Task | undefined>,
  ) {}

  save(task: Task, context: ServerCallContext): Promise<void> {
    return this.live.save(task, context);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return (await this.live.load(taskId, context)) ?? this.fallback(taskId);
  }

  list(params: Parameters<TaskStore['list']>[0], context: ServerCallContext): ReturnType<TaskStore['list']> {
    return this.live.list(params, context);
  }
}
