import { Inject, Injectable } from '@nestjs/common';
import { notFound, READ_STORE, ReadStore } from '@lib/platform';
import { CORPORA, CorpusRow } from '@lib/corpora';
import { bindCorpusRoles, corpusKeysOf, LiveCorpus, liveCorpusRoles } from '../domain/corpus-grants';
import { fromWireGrants, Grants, toWireGrants, WireGrants } from '../domain/roles';

/**
 * Corpus roles bound to corpus ids: bound when granted, checked against the corpora read model whenever they are
 * used (authentication) or shown (reads of keys, users, app clients). One read-model lookup per named corpus.
 */
@Injectable()
export class CorpusGrants {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  /** The corpora, among `keys`, that exist now. */
  async live(keys: readonly string[]): Promise<ReadonlyMap<string, LiveCorpus>> {
    const rows = await Promise.all(keys.map((k) => this.reads.get<CorpusRow>(CORPORA, k)));
    const out = new Map<string, LiveCorpus>();
    rows.forEach((row, i) => row && out.set(keys[i], { corpusId: row.corpus_id, createdAt: row.created_at }));
    return out;
  }

  /**
   * Binds each corpus role to the corpus its key names now. `check()` throws `corpus.not_found` for a key that
   * names none: call it after the domain's escalation checks, so a caller learns nothing about corpora it may
   * not grant.
   */
  async bind(grants: Grants): Promise<{ grants: Grants; check(): void }> {
    const bound = bindCorpusRoles(grants, await this.live(corpusKeysOf(grants)));
    return {
      grants: bound.grants,
      check: () => {
        if (bound.missing.length) throw notFound('corpus.not_found', `Corpus "${bound.missing[0]}" does not exist`, bound.missing[0]);
      },
    };
  }

  /** Each grant set with the corpus roles whose corpus is gone (deleted, or replaced under its key) removed. */
  async inForce(...sets: { grants: Grants; grantedAt: string }[]): Promise<Grants[]> {
    const keys = corpusKeysOf(...sets.map((s) => s.grants));
    if (keys.length === 0) return sets.map((s) => s.grants);
    const live = await this.live(keys);
    return sets.map((s) => liveCorpusRoles(s.grants, live, s.grantedAt));
  }

  /** Rows (keys, users, app clients) with only the corpus roles in force, as reads show them. */
  async rowsInForce<T extends WireGrants>(rows: readonly T[], grantedAt: (row: T) => string): Promise<T[]> {
    const live = await this.inForce(...rows.map((r) => ({ grants: fromWireGrants(r), grantedAt: grantedAt(r) })));
    return rows.map((r, i) => (live[i].corpusRoles.length === r.corpus_roles.length ? r : { ...r, corpus_roles: toWireGrants(live[i]).corpus_roles }));
  }

  /** Whether a row holds a role in force on corpus `key` (lists filtered by corpus): one lookup, then synchronous. */
  async holdsOn<T extends WireGrants>(key: string, grantedAt: (row: T) => string): Promise<(row: T) => boolean> {
    const live = await this.live([key]);
    return (row) => liveCorpusRoles(fromWireGrants(row), live, grantedAt(row)).corpusRoles.some((r) => r.corpusKey === key);
  }
}
