import fc from 'fast-check';
import { parseRobots } from './robots';
import { readHtml, readSitemap } from './web-source';

const ROBOTS = 'https://x.test/robots.txt';

describe('robots.txt (RFC 9309, through robots-parser)', () => {
  const txt = ['User-agent: *', 'Disallow: /private', 'Allow: /private/open', 'Disallow: /*.pdf$', '', 'User-agent: OtherBot', 'Disallow: /', '', 'User-agent: vectara-crawler', 'Disallow: /only-us', 'Crawl-delay: 2'].join('\n');

  it('takes the group naming the crawler, else *; the longest rule wins; * and $ match', () => {
    const ours = parseRobots(ROBOTS, txt, 'Vectara-Crawler/1.0 (+https://www.vectara.com/crawler)');
    expect(ours.allowed('https://x.test/only-us/page')).toBe(false);
    expect(ours.allowed('https://x.test/private')).toBe(true);
    expect(ours.crawlDelay).toBe(2);
    const anyone = parseRobots(ROBOTS, txt, 'SomeBot/2');
    expect(anyone.allowed('https://x.test/private/x')).toBe(false);
    expect(anyone.allowed('https://x.test/private/open/x')).toBe(true);
    expect(anyone.allowed('https://x.test/doc.pdf')).toBe(false);
    expect(anyone.allowed('https://x.test/doc.pdf?v=1')).toBe(true);
    expect(parseRobots(ROBOTS, txt, 'OtherBot/1').allowed('https://x.test/anything')).toBe(false);
    expect(parseRobots(ROBOTS, txt, 'OtherBot/1').allowed('https://x.test/robots.txt')).toBe(true);
    // Rules govern their own origin only.
    expect(parseRobots(ROBOTS, txt, 'OtherBot/1').allowed('https://elsewhere.test/anything')).toBe(true);
  });

  it('never throws, and allows everything when nothing applies', () => {
    fc.assert(
      fc.property(fc.string(), fc.webPath(), (text, path) => {
        const robots = parseRobots(ROBOTS, text.replace(/disallow/gi, 'x'), 'Bot/1');
        expect(robots.allowed(`https://x.test${path.startsWith('/') ? path : `/${path}`}`)).toBe(true);
      }),
    );
  });
});

describe('page and sitemap reading', () => {
  it('reads text without scripts and styles, the title, and absolute links without fragments', () => {
    const page = readHtml('<html><head><title> T </title><style>p{}</style></head><body><script>x()</script><p>Hello <b>world</b></p><a href="/b#top">b</a><a href="https://o.test/">o</a></body></html>', 'https://x.test/a');
    expect(page).toEqual({ title: 'T', text: 'Hello world b o', links: ['https://x.test/b', 'https://o.test/'] });
  });

  it('tells a sitemap index from a url set', () => {
    expect(readSitemap('<urlset><url><loc> https://x.test/a </loc></url></urlset>')).toEqual({ pages: ['https://x.test/a'], sitemaps: [] });
    expect(readSitemap('<sitemapindex><sitemap><loc>https://x.test/s2.xml</loc></sitemap></sitemapindex>')).toEqual({ pages: [], sitemaps: ['https://x.test/s2.xml'] });
  });
});
