/**
 * robots.txt as RFC 9309 reads it: the group of the most specific matching user-agent token (else `*`), the
 * longest matching rule wins, `allow` wins a tie, `*` and `$` in paths; `Crawl-delay` (not in the RFC, widely
 * honoured) read as seconds. Written here because no robots parser is installed; `robots-parser` (npm) is the
 * well-kept one to swap in (docs/pipelines.md).
 */
export interface Robots {
  allowed(url: string): boolean;
  /** Seconds between requests the site asks for, if it does. */
  readonly crawlDelay?: number;
}

interface Group {
  agents: string[];
  rules: { allow: boolean; pattern: RegExp; length: number }[];
  delay?: number;
}

const toPattern = (path: string): RegExp => {
  const anchored = path.endsWith('$');
  const body = (anchored ? path.slice(0, -1) : path).split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${body}${anchored ? '$' : ''}`);
};

export function parseRobots(text: string, userAgent: string): Robots {
  const groups: Group[] = [];
  let current: Group | undefined;
  let lastWasAgent = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const field = m[1].toLowerCase();
    const value = m[2].trim();
    if (field === 'user-agent') {
      if (!current || !lastWasAgent) groups.push((current = { agents: [], rules: [] }));
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (!current) continue;
    if ((field === 'allow' || field === 'disallow') && value) current.rules.push({ allow: field === 'allow', pattern: toPattern(value), length: value.length });
    if (field === 'crawl-delay' && Number.isFinite(Number(value))) current.delay = Number(value);
  }
  // The product token: what comes before the first "/" of the User-Agent, lower-cased.
  const token = userAgent.split('/')[0].trim().toLowerCase();
  const named = groups.filter((g) => g.agents.some((a) => a !== '*' && token.includes(a)));
  const chosen = named.length ? named : groups.filter((g) => g.agents.includes('*'));
  const rules = chosen.flatMap((g) => g.rules);
  const delay = chosen.find((g) => g.delay !== undefined)?.delay;
  return {
    ...(delay !== undefined ? { crawlDelay: delay } : {}),
    allowed(url: string): boolean {
      const u = new URL(url);
      const path = `${u.pathname}${u.search}`;
      if (path === '/robots.txt') return true;
      let best: { allow: boolean; length: number } | undefined;
      for (const r of rules) {
        if (!r.pattern.test(path)) continue;
        if (!best || r.length > best.length || (r.length === best.length && r.allow)) best = r;
      }
      return best?.allow ?? true;
    },
  };
}

export const ALLOW_ALL: Robots = { allowed: () => true };
