import type { Request, Response } from 'express';
import { FeedItem, feedPosition, SessionFeed, TurnSink } from '@lib/agents';
import { invalid } from '@lib/platform';
import { SseEvent, SseStream } from '../http/sse';

/** What a caller may see of a session's stream: its events as shown to it (undefined: not shown), and the machinery (usage, compaction, sub-agent activity). */
export interface StreamView {
  event(view: Record<string, unknown>): Record<string, unknown> | undefined;
  readonly machinery: boolean;
}

export const FULL_VIEW: StreamView = { event: (view) => view, machinery: true };

type SinkItem = { [K in FeedItem['kind']]: Omit<Extract<FeedItem, { kind: K }>, 'id'> & { id?: string } }[FeedItem['kind']];

/**
 * One SSE frame of a session's stream, the same on an input's streaming answer (`POST …/events`) and on a
 * re-attached `GET …/stream`: `id:` the item's place (live-turns.ts), `event:` its type, `data:` its JSON.
 */
export function frameOf(item: SinkItem, view: StreamView): SseEvent | undefined {
  const frame = (type: string, data: Record<string, unknown>): SseEvent => ({ ...(item.id !== undefined ? { id: item.id } : {}), event: type, data: JSON.stringify(data) });
  switch (item.kind) {
    case 'event': {
      const shown = view.event(item.view);
      return shown && frame(String(shown.type), shown);
    }
    case 'delta':
      return frame('streaming_agent_output', { type: 'streaming_agent_output', content: item.content, created_at: item.createdAt });
    case 'delta_end':
      return frame('streaming_agent_output_end', { type: 'streaming_agent_output_end', event_id: item.eventId, created_at: item.createdAt });
    case 'context': {
      if (!view.machinery) return undefined;
      const u = item.usage;
      return frame('context_consumed', { type: 'context_consumed', session_context_usage: { input_tokens: { count: u.input_tokens }, output_tokens: { count: u.output_tokens }, total_tokens: u.input_tokens + u.output_tokens, ...(u.model_context_window ? { model_context_window: u.model_context_window } : {}) }, created_at: item.createdAt });
    }
    case 'compaction':
      return view.machinery ? frame(String(item.view.type), item.view) : undefined;
    case 'activity':
      return view.machinery ? frame(String(item.event.type), item.event) : undefined;
    default: {
      const _exhaustive: never = item;
      return _exhaustive;
    }
  }
}

/**
 * The sink of an input's streaming answer: each item as {@link frameOf} writes it, except the stored `agent_output` of
 * an answer that went out in `streaming_agent_output` pieces: the reference's stream has no `agent_output`, and its
 * `streaming_agent_output_end` names the stored event (`event_id`). A re-attached stream (`GET …/stream`) keeps it.
 */
export function sseSink(stream: SseStream, view: StreamView): TurnSink {
  const send = (item: SinkItem) => {
    const frame = frameOf(item, view);
    if (frame) stream.send(frame);
  };
  const now = () => new Date().toISOString();
  let inPieces = false;
  return {
    event: (v, id) => (v.type === 'agent_output' && inPieces ? undefined : send({ kind: 'event', id, view: v })),
    delta: (content, id) => {
      inPieces = true;
      send({ kind: 'delta', id, content, createdAt: now() });
    },
    deltaEnd: (eventId, id) => {
      inPieces = false;
      if (eventId !== undefined) send({ kind: 'delta_end', id, eventId, createdAt: now() });
    },
    contextConsumed: (usage, id) => send({ kind: 'context', id, usage, createdAt: now() }),
    compactionStarted: (v, id) => send({ kind: 'compaction', id, view: v }),
    activity: (event, id) => send({ kind: 'activity', id, event }),
  };
}

export const END_FRAME: SseEvent = { event: 'end', data: JSON.stringify({ type: 'end' }) };

/**
 * Serves a session's stream (`GET …/stream`): after `Last-Event-ID` if given (a revision `12`, or `12.3` for what a
 * turn streamed), stored events and, while a turn of this process runs, what it streams; with `until=turn_end`,
 * ends with `end` once no turn runs (docs/agents.md, "Re-attaching to a running turn").
 */
export async function followSession(feed: SessionFeed, streamId: string, sessionKey: string, until: string | undefined, req: Request, res: Response, view: StreamView): Promise<void> {
  const last = req.header('last-event-id');
  const after = last === undefined ? undefined : feedPosition(last);
  if (last !== undefined && !after) throw invalid('request.invalid', 'Last-Event-ID must be an id this stream sent', { 'Last-Event-ID': 'not an id of this stream' });
  if (until !== undefined && until !== 'turn_end') throw invalid('request.invalid', 'until must be turn_end', { until: 'must be turn_end' });
  const followed = feed.open(streamId, sessionKey, { after, untilTurnEnd: until === 'turn_end' });
  const stream = SseStream.open(res);
  res.once('close', () => followed.close());
  try {
    for await (const item of followed) {
      if (stream.closed) break;
      const frame = frameOf(item, view);
      if (frame) await stream.paced(frame);
    }
  } finally {
    followed.close();
    stream.end(until === 'turn_end' ? END_FRAME : undefined);
  }
}
