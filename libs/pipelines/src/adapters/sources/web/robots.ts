import robotsParser from 'robots-parser';

/**
 * robots.txt through `robots-parser` (RFC 9309: the group of the matching user-agent token, else `*`; the longest
 * matching rule wins, `allow` on a tie; `*` and `$`), plus `Crawl-delay` (not in the RFC, widely honoured) in
 * seconds. `/robots.txt` itself is always allowed, as the RFC says.
 */
export interface Robots {
  allowed(url: string): boolean;
  /** Seconds between requests the site asks for, if it does. */
  readonly crawlDelay?: number;
}

/** The rules of the robots.txt at `robotsUrl` (its origin is the one they govern) for `userAgent`. */
export function parseRobots(robotsUrl: string, text: string, userAgent: string): Robots {
  const robots = robotsParser(robotsUrl, text);
  const delay = robots.getCrawlDelay(userAgent);
  return {
    ...(delay !== undefined && Number.isFinite(delay) ? { crawlDelay: delay } : {}),
    allowed(url: string): boolean {
      if (new URL(url).pathname === '/robots.txt') return true;
      // undefined: a URL of another origin, which these rules do not govern.
      return robots.isAllowed(url, userAgent) ?? true;
    },
  };
}

export const ALLOW_ALL: Robots = { allowed: () => true };
