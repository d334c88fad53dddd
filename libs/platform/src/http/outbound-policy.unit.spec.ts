import { classifyAddress, embeddedIpv4 } from './ip-address';
import { OutboundPolicy, outboundPolicyFromEnv, parseHostEntry } from './outbound-policy';

const policy = (config: Partial<ConstructorParameters<typeof OutboundPolicy>[0] & object> = {}) =>
  new OutboundPolicy({ allowPrivate: false, allowedHosts: [], deniedHosts: [], ...config });

describe('address classes', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd00:ec2::254', 'private'],
    ['fc00::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['not-an-ip', undefined],
  ])('%s is %s', (address, kind) => expect(classifyAddress(address)).toBe(kind));

  it.each([
    ['::ffff:127.0.0.1', '127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', '127.0.0.1', 'loopback'],
    ['[::ffff:169.254.169.254]', '169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', '169.254.169.254', 'link-local'],
    ['::10.0.0.1', '10.0.0.1', 'private'],
    ['64:ff9b::192.168.0.1', '192.168.0.1', 'private'],
    ['2002:7f00:1::', '127.0.0.1', 'loopback'],
    ['::ffff:8.8.8.8', '8.8.8.8', 'public'],
  ])('IPv6 form %s carries %s and is judged as %s', (address, inner, kind) => {
    expect(embeddedIpv4(address.replace(/[[\]]/g, ''))).toBe(inner);
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe('OutboundPolicy', () => {
  it('by default refuses loopback, private, link-local, unspecified and multicast addresses, and names the settings', () => {
    const p = policy();
    for (const url of ['http://127.0.0.1:8080/v1', 'http://[::1]/', 'http://10.0.0.5/', 'http://169.254.169.254/latest/meta-data', 'http://0.0.0.0:80/', 'http://[::ffff:127.0.0.1]/', 'http://224.0.0.1/', 'http://[fd00::1]/']) {
      expect(p.checkUrl(url)).toBeDefined();
    }
    expect(p.checkUrl('http://127.0.0.1:8080/v1')!.message).toMatch(/127\.0\.0\.1:8080 is not allowed by the outbound policy \(loopback address\).*OUTBOUND_ALLOWED_HOSTS or OUTBOUND_ALLOW_PRIVATE=true/);
    expect(p.checkUrl('https://api.openai.com/v1')).toBeUndefined();
    expect(p.checkUrl('http://8.8.8.8/')).toBeUndefined();
  });

  it('refuses schemes other than http and https', () => {
    expect(policy().checkUrl('file:///etc/passwd')!.reason).toMatch(/scheme file:/);
    expect(policy().checkUrl('ftp://8.8.8.8/')!.reason).toMatch(/scheme ftp:/);
    expect(policy().checkUrl('not a url')!.reason).toMatch(/absolute URL/);
  });

  it('judges a host name by the address it resolves to', () => {
    const p = policy();
    expect(p.checkUrl('http://localhost:11434/')).toBeUndefined();
    expect(p.checkAddress('localhost', 11434, '127.0.0.1')!.message).toMatch(/localhost:11434 \(127\.0\.0\.1\) is not allowed.*loopback/);
    expect(p.checkAddress('rebinding.example', 80, '169.254.169.254')!.reason).toBe('link-local address');
    expect(p.checkAddress('api.example', 443, '93.184.216.34')).toBeUndefined();
  });

  it('OUTBOUND_ALLOW_PRIVATE allows loopback and private networks but not the metadata service', () => {
    const p = policy({ allowPrivate: true });
    expect(p.checkUrl('http://127.0.0.1:11434/')).toBeUndefined();
    expect(p.checkAddress('localhost', 11434, '::1')).toBeUndefined();
    expect(p.checkUrl('http://192.168.1.20/')).toBeUndefined();
    expect(p.checkUrl('http://169.254.169.254/')!.reason).toBe('link-local address');
    expect(p.checkUrl('http://0.0.0.0/')).toBeDefined();
  });

  it('allow entries: host, host:port, IP, IP:port, [IPv6]:port, CIDR and *.domain', () => {
    const p = policy({ allowedHosts: ['ollama.lan', 'localhost:11434', '127.0.0.2', '127.0.0.1:8080', '[::1]:9000', '10.0.0.0/8', '*.corp.internal', 'fd00::/8'] });
    expect(p.checkAddress('ollama.lan', 80, '192.168.1.5')).toBeUndefined();
    expect(p.checkAddress('localhost', 11434, '127.0.0.1')).toBeUndefined();
    expect(p.checkAddress('localhost', 11435, '127.0.0.1')).toBeDefined();
    expect(p.checkUrl('http://127.0.0.2:1234/')).toBeUndefined();
    expect(p.checkUrl('http://127.0.0.1:8080/')).toBeUndefined();
    expect(p.checkUrl('http://127.0.0.1:8081/')).toBeDefined();
    expect(p.checkUrl('http://[::1]:9000/')).toBeUndefined();
    expect(p.checkUrl('http://[::1]:9001/')).toBeDefined();
    expect(p.checkUrl('http://10.200.3.4/')).toBeUndefined();
    expect(p.checkUrl('http://[::ffff:10.200.3.4]/')).toBeUndefined();
    expect(p.checkUrl('http://11.0.0.1/')).toBeUndefined(); // public anyway
    expect(p.checkAddress('llm.corp.internal', 443, '172.20.0.3')).toBeUndefined();
    expect(p.checkAddress('corp.internal.evil', 443, '172.20.0.3')).toBeDefined();
    expect(p.checkUrl('http://[fd12::5]/')).toBeUndefined();
    expect(p.checkUrl('http://172.16.0.1/')).toBeDefined();
  });

  it('deny entries win over allow entries and over public addresses', () => {
    const p = policy({ allowPrivate: true, allowedHosts: ['10.0.0.0/8'], deniedHosts: ['10.0.0.7', 'evil.example', '8.8.8.0/24'] });
    expect(p.checkUrl('http://10.0.0.7/')!.reason).toMatch(/OUTBOUND_DENIED_HOSTS/);
    expect(p.checkUrl('http://10.0.0.8/')).toBeUndefined();
    expect(p.checkUrl('https://EVIL.example./x')!.reason).toMatch(/OUTBOUND_DENIED_HOSTS/);
    expect(p.checkAddress('dns.example', 443, '8.8.8.8')).toBeDefined();
  });

  it('checkResolved refuses a name resolving to a refused address, and lets an unresolvable one through', async () => {
    const p = policy();
    const lookup = async (host: string) => (host === 'inside.example' ? [{ address: '8.8.8.8' }, { address: '10.0.0.1' }] : host === 'outside.example' ? [{ address: '8.8.8.8' }] : Promise.reject(new Error('ENOTFOUND')));
    expect((await p.checkResolved('http://inside.example/', lookup))!.reason).toBe('private address');
    expect(await p.checkResolved('http://outside.example/', lookup)).toBeUndefined();
    expect(await p.checkResolved('http://nowhere.example/', lookup)).toBeUndefined();
    expect(await p.checkResolved('http://127.0.0.1/', lookup)).toBeDefined();
  });
});

describe('outboundPolicyFromEnv', () => {
  it('reads the settings and reports malformed entries', () => {
    expect(outboundPolicyFromEnv({}).config).toEqual({ allowPrivate: false, allowedHosts: [], deniedHosts: [] });
    expect(outboundPolicyFromEnv({ OUTBOUND_ALLOW_PRIVATE: 'true', OUTBOUND_ALLOWED_HOSTS: ' localhost:11434 , 10.0.0.0/8' }).config).toEqual({
      allowPrivate: true,
      allowedHosts: ['localhost:11434', '10.0.0.0/8'],
      deniedHosts: [],
    });
    const bad = outboundPolicyFromEnv({ OUTBOUND_ALLOW_PRIVATE: 'yes', OUTBOUND_ALLOWED_HOSTS: '10.0.0.0/40,host:99999,http://x' });
    expect(bad.problems).toEqual([
      expect.stringMatching(/OUTBOUND_ALLOW_PRIVATE must be true or false/),
      expect.stringMatching(/OUTBOUND_ALLOWED_HOSTS: "10.0.0.0\/40" is not an IP address or CIDR/),
      expect.stringMatching(/OUTBOUND_ALLOWED_HOSTS: "host:99999": port must be 1 to 65535/),
      expect.stringMatching(/OUTBOUND_ALLOWED_HOSTS: "http:\/\/x" is not a host name/),
    ]);
    expect(() => parseHostEntry('::1')).not.toThrow();
  });

  it('reads each purpose from its own settings, the deny list from the shared one, and names them in refusals', () => {
    const env = { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1:11434', OUTBOUND_TOOLS_ALLOWED_HOSTS: 'intranet.example', OUTBOUND_PIPELINES_ALLOW_PRIVATE: 'true', OUTBOUND_DENIED_HOSTS: '203.0.113.0/24' };
    const tools = new OutboundPolicy(outboundPolicyFromEnv(env, 'tools').config);
    const pipelines = new OutboundPolicy(outboundPolicyFromEnv(env, 'pipelines').config);
    expect(new OutboundPolicy(outboundPolicyFromEnv(env).config).checkAddress('127.0.0.1', 11434, '127.0.0.1')).toBeUndefined();
    expect(tools.checkAddress('127.0.0.1', 11434, '127.0.0.1')?.message).toMatch(/allow it with OUTBOUND_TOOLS_ALLOWED_HOSTS or OUTBOUND_TOOLS_ALLOW_PRIVATE=true$/);
    expect(tools.checkAddress('intranet.example', 443, '10.1.2.3')).toBeUndefined();
    expect(pipelines.checkAddress('127.0.0.1', 11434, '127.0.0.1')).toBeUndefined();
    expect(pipelines.checkAddress('x.example', 443, '203.0.113.9')?.reason).toBe('denied by OUTBOUND_DENIED_HOSTS');
    expect(outboundPolicyFromEnv({ OUTBOUND_TOOLS_ALLOW_PRIVATE: 'maybe' }, 'tools').problems).toEqual([expect.stringMatching(/OUTBOUND_TOOLS_ALLOW_PRIVATE must be true or false/)]);
  });
});
