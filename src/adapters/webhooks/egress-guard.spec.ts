import { EgressGuard, embeddedIPv4, isPublicAddress, parseWebhookUrl, ResolvedAddress, Resolver } from './egress-guard';

/** A resolver that answers from a table and counts the lookups; nothing leaves the machine. */
function fakeResolver(table: Record<string, string[] | Error>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    calls.push(host);
    const answer = table[host] ?? Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    if (answer instanceof Error) throw answer;
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

describe('non-public addresses', () => {
  it.each([
    ['0.0.0.0', 'this network'],
    ['0.1.2.3', 'this network'],
    ['10.0.0.1', 'RFC 1918'],
    ['10.255.255.255', 'RFC 1918'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.254', 'CGNAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'cloud metadata (link-local)'],
    ['172.16.0.1', 'RFC 1918'],
    ['172.31.255.255', 'RFC 1918'],
    ['192.0.0.170', 'IETF protocol assignments'],
    ['192.0.2.10', 'TEST-NET-1'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['192.168.1.1', 'RFC 1918'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'TEST-NET-2'],
    ['203.0.113.9', 'TEST-NET-3'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'IPv4-mapped metadata, written out'],
    ['::ffff:10.1.2.3', 'IPv4-mapped RFC 1918'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['2002:7f00:1::1', '6to4 of loopback'],
    ['2002:c0a8:101::', '6to4 of 192.168.1.1'],
    ['100::1', 'discard-only'],
    ['2001::1', 'Teredo'],
    ['2001:2::1', 'benchmarking'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation (RFC 9637)'],
    ['fc00::1', 'unique-local'],
    ['fd00:ec2::254', 'unique-local (EC2 metadata)'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['fec0::1', 'site-local (deprecated)'],
    ['ff02::1', 'multicast'],
    ['4000::1', 'outside global unicast'],
    ['not-an-ip', 'not an address at all'],
  ])('%s (%s) is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
    expect(new EgressGuard([]).allows(address)).toBe(false);
  });

  it.each([
    ['1.1.1.1'],
    ['8.8.8.8'],
    ['93.184.215.14'],
    ['100.63.255.255'], // just below CGNAT
    ['100.128.0.0'], // just above CGNAT
    ['172.15.255.255'], // just below 172.16/12
    ['172.32.0.0'], // just above it
    ['169.253.255.255'],
    ['198.17.255.255'],
    ['223.255.255.255'],
    ['::ffff:8.8.8.8'], // IPv4-mapped public
    ['64:ff9b::808:808'], // NAT64 of 8.8.8.8
    ['2002:808:808::1'], // 6to4 of 8.8.8.8
    ['2001:4860:4860::8888'],
    ['2606:4700:4700::1111'],
    ['2a00:1450:4001::200e'],
  ])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
    expect(new EgressGuard([]).allows(address)).toBe(true);
  });

  it('finds the IPv4 address inside mapped, NAT64 and 6to4 addresses, and nothing in others', () => {
    expect(embeddedIPv4('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(embeddedIPv4('::ffff:a9fe:a9fe')).toBe('169.254.169.254');
    expect(embeddedIPv4('64:ff9b::c0a8:101')).toBe('192.168.1.1');
    expect(embeddedIPv4('2002:0a00:0001::5')).toBe('10.0.0.1');
    expect(embeddedIPv4('2001:db8::1')).toBeNull();
    expect(embeddedIPv4('::1')).toBeNull();
    expect(embeddedIPv4('127.0.0.1')).toBeNull();
  });
});

describe("the operator's allowlist", () => {
  it('lets the listed CIDRs through, and nothing else that is not public', () => {
    const guard = new EgressGuard(['10.0.0.0/8', 'fd00::/8']);
    expect(guard.allows('10.1.2.3')).toBe(true);
    expect(guard.allows('::ffff:10.1.2.3')).toBe(true); // the same address, mapped
    expect(guard.allows('2002:a01:203::1')).toBe(true); // and through 6to4
    expect(guard.allows('fd00:ec2::254')).toBe(true);
    expect(guard.allows('11.0.0.1')).toBe(true); // public anyway
    for (const no of ['127.0.0.1', '::1', '169.254.169.254', '192.168.0.1', 'fc00::1', 'fe80::1'])
      expect(guard.allows(no)).toBe(false);
  });

  it('lets everything through when set to true (0.0.0.0/0 and ::/0)', () => {
    const guard = new EgressGuard(['0.0.0.0/0', '::/0']);
    for (const any of ['127.0.0.1', '::1', '169.254.169.254', 'fd00:ec2::254', '::ffff:127.0.0.1', '8.8.8.8'])
      expect(guard.allows(any)).toBe(true);
  });
});

describe('webhook URLs', () => {
  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0/', '0.0.0.0'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['http://[0:0:0:0:0:0:0:1]/', '[::1]'],
    ['HTTP://LOCALHOST:80/', 'localhost'],
  ])('%s is read the way WHATWG URL reads it, as host %s', (raw, host) => {
    const url = parseWebhookUrl(raw);
    expect(url).toBeInstanceOf(URL);
    expect((url as URL).hostname).toBe(host);
  });

  it.each([
    ['http://2130706433/'],
    ['http://0x7f.1/'],
    ['http://017700000001/'],
    ['http://127.1:8080/x'],
    ['http://0/'],
    ['http://[::ffff:127.0.0.1]/'],
    ['http://[::1]/'],
    ['https://169.254.169.254/latest/meta-data/'],
    ['http://[fd00:ec2::254]/'],
    ['http://10.0.0.1/'],
    ['http://100.64.0.1/'],
  ])('%s, an address in disguise or not, is refused before any lookup', async (raw) => {
    const resolver = fakeResolver({});
    const r = await new EgressGuard([], resolver).check(raw);
    expect(r).toMatchObject({
      ok: false,
      refusal: 'destination_not_allowed',
      detail: expect.stringContaining('is not a public address'),
    });
    expect(resolver.calls).toEqual([]);
  });

  it.each([
    ['ftp://example.com/x', 'must be an http(s) URL'],
    ['file:///etc/passwd', 'must be an http(s) URL'],
    ['gopher://example.com:70/', 'must be an http(s) URL'],
    ['http://user:pass@example.com/', 'must not carry credentials'],
    ['https://token@example.com/', 'must not carry credentials'],
    ['http://exa mple.com/', 'is not a URL'],
    ['example.com/hook', 'is not a URL'],
  ])('%s is refused: %s', async (raw, why) => {
    const resolver = fakeResolver({ 'example.com': ['93.184.215.14'] });
    expect(await new EgressGuard(['0.0.0.0/0', '::/0'], resolver).check(raw)).toMatchObject({
      ok: false,
      refusal: 'invalid_url',
      detail: expect.stringContaining(why),
    });
    expect(resolver.calls).toEqual([]);
  });

  it('accepts a public literal address and answers it as the one address to connect to', async () => {
    expect(await new EgressGuard([], fakeResolver({})).check('https://[2606:4700:4700::1111]:8443/h')).toMatchObject({
      ok: true,
      addresses: [{ address: '2606:4700:4700::1111', family: 6 }],
    });
  });
});

describe('host names', () => {
  it('are resolved once, and every address must be allowed', async () => {
    const resolver = fakeResolver({
      'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
      'mixed.example.com': ['93.184.215.14', '10.0.0.5'],
    });
    const guard = new EgressGuard([], resolver);
    const ok = await guard.check('https://hooks.example.com/tollgate');
    expect(ok).toMatchObject({
      ok: true,
      addresses: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
    });
    expect((ok as { url: URL }).url.hostname).toBe('hooks.example.com');
    expect(await guard.check('https://mixed.example.com/')).toMatchObject({
      ok: false,
      refusal: 'destination_not_allowed',
    });
    expect(resolver.calls).toEqual(['hooks.example.com', 'mixed.example.com']);
  });

  it('that resolve to private addresses are refused, without naming the address or telling it from a failed lookup', async () => {
    const guard = new EgressGuard(
      [],
      fakeResolver({
        'db.internal': ['10.0.0.5'],
        'meta.example.com': ['169.254.169.254'],
        'v6.internal': ['fd00::5'],
        mapped: ['::ffff:127.0.0.1'],
      }),
    );
    const refusals = await Promise.all(
      ['db.internal', 'meta.example.com', 'v6.internal', 'mapped', 'nowhere.example'].map((h) =>
        guard.check(`http://${h}/`),
      ),
    );
    expect(refusals.map((r) => (r.ok ? 'ok' : r.refusal))).toEqual([
      'destination_not_allowed',
      'destination_not_allowed',
      'destination_not_allowed',
      'destination_not_allowed',
      'dns_failed',
    ]);
    const details = refusals.map((r) => (r.ok ? '' : r.detail.replace(/^\S+/, '<host>')));
    expect(new Set(details).size).toBe(1);
    expect(details[0]).not.toMatch(/10\.0\.0\.5|169\.254|ENOTFOUND/);
  });

  it('that resolve to nothing are refused as dns_failed', async () => {
    expect(await new EgressGuard([], fakeResolver({ empty: [] })).check('http://empty/')).toMatchObject({
      ok: false,
      refusal: 'dns_failed',
    });
  });

  it('pass when the operator allows the private addresses they resolve to', async () => {
    const guard = new EgressGuard(
      ['10.0.0.0/8'],
      fakeResolver({ 'db.internal': ['10.0.0.5'], 'other.internal': ['192.168.0.5'] }),
    );
    expect(await guard.check('http://db.internal:8080/')).toMatchObject({
      ok: true,
      addresses: [{ address: '10.0.0.5' }],
    });
    expect(await guard.check('http://other.internal/')).toMatchObject({
      ok: false,
      refusal: 'destination_not_allowed',
    });
  });

  it('are judged on what they resolve to at each check: a name that turns private later is refused then (DNS rebinding)', async () => {
    const answers = [['93.184.215.14'], ['127.0.0.1']];
    const guard = new EgressGuard([], async () => answers.shift()!.map((address) => ({ address, family: 4 as const })));
    expect(await guard.check('http://rebind.example.com/')).toMatchObject({ ok: true }); // at registration
    expect(await guard.check('http://rebind.example.com/')).toMatchObject({
      ok: false,
      refusal: 'destination_not_allowed',
    }); // at delivery
  });
});
