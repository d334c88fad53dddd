import { conflict } from '@lib/platform/kernel';
import type { SessionEvent, TurnUsage } from './session-events';
import type { ActiveSession } from './session';
import type { Stamp } from './session-input';

/**
 * A turn's bookkeeping, decided on the session's folded state: its start (appended at the session's revision), its end
 * with each outcome, the interrupt a stopped turn records, and the close of a turn whose runner died.
 */

export type TurnOutcome = 'answered' | 'interrupted' | 'client_tool' | 'approval' | 'failed' | 'limit';

/** A turn starts on a session with none running (the lease keeps two processes from both starting one). */
export function decideStartTurn(s: ActiveSession, command: { readonly turnId: string; readonly step: string; readonly holder: string; readonly agentRevision: number; readonly now: Date }): SessionEvent[] {
  if (s.turn) throw conflict('session.turn_running', 'A turn is already running in this session: send the input with behavior "steer" or "follow_up"');
  return [{ type: 'SessionTurnStarted', data: { turnId: command.turnId, step: command.step, holder: command.holder, agentRevision: command.agentRevision, createdAt: command.now.toISOString() } }];
}

/**
 * A stopped turn (outcome `interrupted`) whose interrupt was not stored by a request records one: `cancelled`
 * when its in-process caller cancelled it (a pipeline record's timeout, a schedule's stall, a parent turn), else
 * `request`. Nothing otherwise. A streaming HTTP caller that goes away stops nothing (issue 43): `disconnect` is
 * only in logs written before.
 */
export function decideStopInterrupt(_s: ActiveSession, command: Stamp & { readonly turnId: string; readonly outcome: TurnOutcome; readonly interruptRecorded: boolean; readonly cancelled: boolean }): SessionEvent[] {
  if (command.outcome !== 'interrupted' || command.interruptRecorded) return [];
  return [{ type: 'SessionInterrupted', data: { eventId: command.newEventId(), turnId: command.turnId, createdAt: command.now.toISOString(), reason: command.cancelled ? 'cancelled' : 'request' } }];
}

export interface EndTurnCommand {
  readonly turnId: string;
  readonly outcome: TurnOutcome;
  readonly usage: TurnUsage;
  /** The failure's message (outcome `failed`). */
  readonly error?: string;
  /** The step the turn stands on when it ends. */
  readonly step: string;
  /** The agent's steps (their `reentry_step`). */
  readonly steps: Readonly<Record<string, { readonly reentry_step?: string } | undefined>>;
  /** A compaction asked for by an input ends on the step it ran on. */
  readonly compaction?: boolean;
  /** The turn's final answer, stored in the same append as its end. */
  readonly final?: Extract<SessionEvent, { type: 'SessionAgentOutput' | 'SessionStructuredOutput' }>;
  readonly now: Date;
}

/**
 * The end of a turn, always recorded (even when a sweep closed it meanwhile: what the turn did is kept). A turn
 * waiting for client tools or approvals resumes on its step; an ended one re-enters where the step says (`reentry_step`).
 */
export function decideEndTurn(_s: ActiveSession, command: EndTurnCommand): SessionEvent[] {
  const nextStep = command.compaction || command.outcome === 'client_tool' || command.outcome === 'approval' ? command.step : (command.steps[command.step]?.reentry_step ?? command.step);
  const ended: SessionEvent = {
    type: 'SessionTurnEnded',
    data: { turnId: command.turnId, outcome: command.outcome, usage: command.usage, ...(command.error !== undefined ? { error: command.error } : {}), nextStep, createdAt: command.now.toISOString() },
  };
  return command.final ? [command.final, ended] : [ended];
}

/**
 * The running turn of a session whose runner stopped (its lease expired: a process killed mid-turn) is closed
 * as interrupted by crash; the session takes input again on the step the turn stood on. Nothing when no turn runs.
 */
export function decideCloseCrashedTurn(s: ActiveSession, command: Stamp): SessionEvent[] {
  if (!s.turn) return [];
  const at = command.now.toISOString();
  return [
    { type: 'SessionInterrupted', data: { eventId: command.newEventId(), turnId: s.turn.turnId, reason: 'crash', createdAt: at } },
    { type: 'SessionTurnEnded', data: { turnId: s.turn.turnId, outcome: 'interrupted', usage: { input_tokens: 0, output_tokens: 0 }, error: 'the process running the turn stopped', nextStep: s.turn.step, createdAt: at } },
  ];
}
