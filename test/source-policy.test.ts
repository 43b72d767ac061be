/**
 * The repository source policy end to end (API, Temporal worker, git) and its address rules at
 * their edges: a name that resolves to this machine passes registration (names are not resolved
 * then) and fails the audit with repository_host_not_allowed before any connection.
 */
import test from 'ava';
import net from 'node:net';
import os from 'node:os';
import {
  addressProblem,
  checkSource,
  looseIpv4,
  type SourcePolicy,
} from '../domain/repositories/source-policy';
import { insertRepository } from '../db/repositories';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES } from './helpers/git';
import { call } from './helpers/http';

let h: AuditHarness;

test.before(async () => {
  h = await startAuditHarness();
});
test.after.always(async () => {
  await h?.close();
});

test('an audit of a host that resolves to this machine fails with repository_host_not_allowed; nothing connects', async (t) => {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as net.AddressInfo).port;

  const tenant = await createTenant(h.app.services.db);
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  // This machine's own name (/etc/hosts): a plain name at registration, loopback at fetch time.
  const url = `https://${os.hostname()}:${port}/org/r.git`;
  const repo = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'own-host', url },
  });
  t.is(repo.status, 201, repo.text);
  const started = await call(h.app.url, 'POST', `${ws}/audits`, {
    token: tenant.token,
    body: { repository_id: repo.body.id },
  });
  t.is(started.status, 202, started.text);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  t.is(done.body.status, 'failed');
  const source = done.body.stages.find((s: { key: string }) => s.key === 'source');
  t.is(source.status, 'failed');
  t.is(source.error_code, 'repository_host_not_allowed');
  const logs = await call(h.app.url, 'GET', `${ws}/audits/${started.body.id}/logs`, {
    token: tenant.token,
  });
  t.true(
    logs.body.items.some((l: { message: string }) => /resolves to a .* address/.test(l.message)),
    logs.text,
  );
  t.is(connections, 0, 'the worker never connected');
});

test('a local repository stored before the setting stopped naming its workspace is refused at fetch time', async (t) => {
  // As if registered while the workspace was named in LOCAL_REPOSITORY_WORKSPACES (or written
  // by an older version): the row holds a file:// URL, the fetch decides again.
  const repo = createRepo(SAMPLE_FILES);
  t.teardown(() => repo.remove());
  const tenant = await createTenant(h.app.services.db, { slugPrefix: 'other-' });
  const row = await insertRepository(h.app.services.db, {
    workspaceId: tenant.workspaceId,
    name: 'stale',
    url: `file://${repo.dir}`,
    defaultBranch: 'main',
    description: null,
  });
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const started = await call(h.app.url, 'POST', `${ws}/audits`, {
    token: tenant.token,
    body: { repository_id: row.id },
  });
  t.is(started.status, 202, started.text);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  t.is(done.body.status, 'failed');
  const source = done.body.stages.find((s: { key: string }) => s.key === 'source');
  t.is(source.error_code, 'local_repository_not_allowed');
  t.is(done.body.commit_sha ?? null, null, 'nothing was read');
});

test('address rules at the edges of each range: just outside is public, just inside is refused', (t) => {
  const publicAddresses = [
    '8.8.8.8',
    '1.1.1.1',
    '140.82.112.3',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '192.169.0.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:82b::200e',
    '::ffff:8.8.8.8',
    '2002:808:808::1',
  ];
  for (const address of publicAddresses) t.is(addressProblem(address), null, address);
  const refused: Array<[string, RegExp]> = [
    ['10.0.0.0', /private/],
    ['10.255.255.255', /private/],
    ['100.64.0.0', /CGNAT/],
    ['100.127.255.255', /CGNAT/],
    ['127.255.255.254', /loopback/],
    ['169.254.169.254', /link-local/],
    ['172.16.0.0', /private/],
    ['172.31.255.255', /private/],
    ['192.168.255.255', /private/],
    ['224.0.0.0', /multicast/],
    ['239.255.255.255', /multicast/],
    ['240.0.0.1', /reserved/],
    ['0.0.0.0', /unspecified/],
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['::ffff:169.254.169.254', /link-local.*IPv6/],
    ['::ffff:a9fe:a9fe', /link-local.*IPv6/],
    ['64:ff9b::127.0.0.1', /loopback.*IPv6/],
    ['2002:0a00:0001::', /private.*6to4/],
    ['fd00:ec2::254', /unique-local/],
    ['fdff:ffff::1', /unique-local/],
    ['fe80::1%eth0', /link-local/],
    ['febf::1', /link-local/],
    ['ff02::1', /multicast/],
    ['2001:db8::1', /documentation/],
    ['3fff::1', /documentation/],
    ['4000::1', /reserved/],
  ];
  for (const [address, reason] of refused) t.regex(addressProblem(address) ?? '', reason, address);
});

test('numeric host spellings are read as resolvers read them', (t) => {
  const cases: Array<[string, string | null]> = [
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0X7F.1', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['4294967295', '255.255.255.255'],
    ['example.com', null],
    ['1e3', null],
    ['08', null],
  ];
  for (const [host, expected] of cases) t.is(looseIpv4(host), expected, host);
  t.is(looseIpv4('4294967296'), 'invalid');
  t.is(looseIpv4('256.0.0.1'), 'invalid');
});

test('policy entries name workspaces by id, slug or slug prefix, case-insensitively', (t) => {
  const policy: SourcePolicy = {
    localWorkspaces: ['Acme', 'team-*', '0b9c2f0e-0000-4000-8000-000000000001'],
    sshWorkspaces: {},
    allowedHosts: [],
    protectedPaths: [],
    exemptPaths: [],
  };
  const verdict = (slug: string, id = '5b0c7c1e-8f6a-4d52-9a51-0d3f2a9e7b11') =>
    checkSource('/srv/git/r.git', { id, slug }, policy).ok;
  t.true(verdict('acme'));
  t.true(verdict('team-blue'));
  t.true(verdict('anything', '0B9C2F0E-0000-4000-8000-000000000001'));
  t.false(verdict('acme2'));
  t.false(verdict('myteam-blue'));
  t.false(verdict('team'));
  // `*` alone names nothing: every workspace is never one setting away by accident.
  t.false(
    checkSource('/srv/git/r.git', { id: 'x', slug: 'y' }, { ...policy, localWorkspaces: ['*'] }).ok,
  );
});
