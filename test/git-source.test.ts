/**
 * activities/source/git.ts against real repositories made with the git CLI in temporary folders
 * (local sources of a workspace the policy allows): fetching a branch, a full ref, a commit (directly and through
 * the fetch-everything fallback), ref and URL refusals, tree listing and binary-safe blob reads,
 * hostile repositories (hooks, .gitmodules, path traversal), timeouts that leave no git
 * process behind, and the source policy at fetch time: internal hosts refused before any
 * connection, resolved addresses checked and pinned, nothing ambient reaching git or ssh.
 */
import test, { type ExecutionContext } from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SourceError } from '../domain/audits/source-error';
import { processesMentioning } from './helpers/processes';
import { isValidRefName, refNameProblem } from '../domain/repositories/git-ref';
import type { SourcePolicy, WorkspaceRef } from '../domain/repositories/source-policy';
import { fetchCommit, type FetchRequest } from '../activities/audits/source/git';
import { listTree, readBlobs } from '../activities/audits/source/git-read';
import { gitEnv, gitTestOverrides, redact, summarize } from '../activities/audits/source/git-run';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'git-source-test-'));
const sourceDir = path.join(root, 'source');
const marker = path.join(root, 'PWNED');
const shas = { first: '', main: '', feature: '' };

/** Environment of the fixture-building git commands: no user or system config. */
const fixtureEnv: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_'))),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: root,
  GIT_TERMINAL_PROMPT: '0',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: fixtureEnv, encoding: 'utf8' }).trim();
}

function gitInput(cwd: string, input: Buffer | string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: fixtureEnv, input, encoding: 'utf8' }).trim();
}

function initRepo(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '--quiet', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test');
  git(dir, 'config', 'user.email', 'test@example.com');
  git(dir, 'config', 'commit.gpgsign', 'false');
}

function commitAll(dir: string, message: string): string {
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '--no-verify', '-m', message);
  return git(dir, 'rev-parse', 'HEAD');
}

const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const oddNames = ['spaced name ü.txt', 'new\nline.txt'];

/** A hook of every name git has, each creating the marker file. */
function installHooks(gitDir: string): void {
  const hooks = [
    'applypatch-msg',
    'pre-applypatch',
    'post-applypatch',
    'pre-commit',
    'pre-merge-commit',
    'prepare-commit-msg',
    'commit-msg',
    'post-commit',
    'pre-rebase',
    'post-checkout',
    'post-merge',
    'pre-push',
    'pre-receive',
    'update',
    'proc-receive',
    'post-receive',
    'post-update',
    'reference-transaction',
    'push-to-checkout',
    'pre-auto-gc',
    'post-rewrite',
    'sendemail-validate',
    'fsmonitor-watchman',
    'p4-changelist',
    'post-index-change',
  ];
  fs.mkdirSync(path.join(gitDir, 'hooks'), { recursive: true });
  for (const hook of hooks) {
    fs.writeFileSync(path.join(gitDir, 'hooks', hook), `#!/bin/sh\ntouch '${marker}'\n`, {
      mode: 0o755,
    });
  }
}

test.before(() => {
  initRepo(sourceDir);
  fs.writeFileSync(path.join(sourceDir, 'README.md'), 'hello\n');
  fs.mkdirSync(path.join(sourceDir, 'dir', 'sub'), { recursive: true });
  fs.writeFileSync(path.join(sourceDir, 'dir', 'sub', 'nested.txt'), 'nested content\n');
  shas.first = commitAll(sourceDir, 'first');
  git(sourceDir, 'tag', '-a', '-m', 'version 1', 'v1');

  fs.writeFileSync(path.join(sourceDir, 'bytes.bin'), allBytes);
  fs.symlinkSync('dir/sub/nested.txt', path.join(sourceDir, 'link'));
  fs.writeFileSync(path.join(sourceDir, 'run.sh'), '#!/bin/sh\necho run\n', { mode: 0o755 });
  for (const name of oddNames) fs.writeFileSync(path.join(sourceDir, name), `${name}\n`);
  shas.main = commitAll(sourceDir, 'second');

  git(sourceDir, 'checkout', '--quiet', '-b', 'feature');
  fs.writeFileSync(path.join(sourceDir, 'feature.txt'), 'feature\n');
  shas.feature = commitAll(sourceDir, 'feature work');
  git(sourceDir, 'checkout', '--quiet', 'main');
});

test.after.always(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function workDir(t: ExecutionContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'git-source-work-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const workspace: WorkspaceRef = { id: '5b0c7c1e-8f6a-4d52-9a51-0d3f2a9e7b11', slug: 'local-ws' };
/** The workspace may use local sources; nothing else is special. */
const localPolicy: SourcePolicy = {
  localWorkspaces: ['local-ws'],
  sshWorkspaces: {},
  allowedHosts: [],
  protectedPaths: [],
  exemptPaths: [],
};
/** A policy that names no workspace for anything. */
const strictPolicy: SourcePolicy = { ...localPolicy, localWorkspaces: [] };

function request(t: ExecutionContext, over: Partial<FetchRequest>): FetchRequest {
  return {
    url: sourceDir,
    branchRef: 'main',
    commitSha: null,
    workDir: workDir(t),
    workspace,
    policy: localPolicy,
    timeoutMs: 30_000,
    ...over,
  };
}

async function sourceError(t: ExecutionContext, promise: Promise<unknown>): Promise<SourceError> {
  const err = await t.throwsAsync(promise);
  t.true(err instanceof SourceError, `expected a SourceError, got ${String(err)}`);
  return err as SourceError;
}

// --- fetching ------------------------------------------------------------------------------

test.serial(
  'an older commit is found by the fetch-everything fallback (server refuses it)',
  async (t) => {
    // Protocol v0 servers refuse commits that are not a ref tip ("unadvertised object"), so the
    // direct shallow fetch fails and the fallback fetches all branches and tags.
    gitTestOverrides.extraConfig = ['protocol.version=0'];
    try {
      const req = request(t, { branchRef: null, commitSha: shas.first });
      t.deepEqual(await fetchCommit(req), { commitSha: shas.first, ref: null });
      const gitDir = path.join(req.workDir, 'repo.git');
      t.is(
        git(req.workDir, '--git-dir', gitDir, 'rev-parse', 'refs/remotes/origin/feature'),
        shas.feature,
      );
      // The unknown commit goes through the same fallback and is then reported missing.
      const missing = 'f'.repeat(40);
      const err = await sourceError(
        t,
        fetchCommit(request(t, { branchRef: null, commitSha: missing })),
      );
      t.is(err.code, 'commit_not_found');
    } finally {
      gitTestOverrides.extraConfig = [];
    }
  },
);

test.serial('git variables of the service environment do not reach git', async (t) => {
  const saved = { ...process.env };
  // Were they inherited, git would look in another repository and rewrite the source URL.
  process.env.GIT_DIR = path.join(root, 'nowhere.git');
  process.env.GIT_CONFIG_PARAMETERS = `'url.${root}/nowhere.insteadof'='${sourceDir}'`;
  process.env.GIT_SSH_COMMAND = `touch ${marker}`;
  try {
    const fetched = await fetchCommit(request(t, { branchRef: 'main' }));
    t.is(fetched.commitSha, shas.main);
  } finally {
    for (const name of ['GIT_DIR', 'GIT_CONFIG_PARAMETERS', 'GIT_SSH_COMMAND']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
  t.false(fs.existsSync(marker));
});

test('fetches the default branch from an absolute path', async (t) => {
  const req = request(t, { branchRef: 'main' });
  const fetched = await fetchCommit(req);
  t.deepEqual(fetched, { commitSha: git(sourceDir, 'rev-parse', 'main'), ref: 'refs/heads/main' });
  // Bare and shallow: nothing checked out, only the tip commit.
  const gitDir = path.join(req.workDir, 'repo.git');
  t.deepEqual(fs.readdirSync(req.workDir), ['repo.git']);
  t.is(git(req.workDir, '--git-dir', gitDir, 'rev-parse', '--is-shallow-repository'), 'true');
});

test('fetches the feature branch over file://', async (t) => {
  const fetched = await fetchCommit(
    request(t, { url: `file://${sourceDir}`, branchRef: 'feature' }),
  );
  t.deepEqual(fetched, { commitSha: shas.feature, ref: 'refs/heads/feature' });
});

test('fetches an annotated tag by its full ref (peeled to the commit)', async (t) => {
  const fetched = await fetchCommit(request(t, { branchRef: 'refs/tags/v1' }));
  t.deepEqual(fetched, { commitSha: shas.first, ref: 'refs/tags/v1' });
});

test('fetches an older commit by sha (protocol v2 serves it directly)', async (t) => {
  const req = request(t, { branchRef: null, commitSha: shas.first });
  t.deepEqual(await fetchCommit(req), { commitSha: shas.first, ref: null });
});

test('fetches a commit and records the branch given with it', async (t) => {
  const fetched = await fetchCommit(request(t, { branchRef: 'feature', commitSha: shas.first }));
  t.deepEqual(fetched, { commitSha: shas.first, ref: 'refs/heads/feature' });
});

test('an unknown branch is branch_not_found', async (t) => {
  const err = await sourceError(t, fetchCommit(request(t, { branchRef: 'nope' })));
  t.is(err.code, 'branch_not_found');
  t.is(err.message, `branch nope does not exist in ${sourceDir}`);
});

test('an unknown commit is commit_not_found', async (t) => {
  const missing = '0123456789abcdef0123456789abcdef01234567';
  const err = await sourceError(
    t,
    fetchCommit(request(t, { branchRef: null, commitSha: missing })),
  );
  t.is(err.code, 'commit_not_found');
});

test('invalid branch names, refs and shas are invalid_ref', async (t) => {
  const refs = [
    '-x',
    'a..b',
    'HEAD',
    '@{-1}',
    'main:evil',
    'a b',
    'x~1',
    'refs/heads/a..b',
    'ma*n',
    'lock.lock',
    '',
  ];
  for (const branchRef of refs) {
    const err = await sourceError(t, fetchCommit(request(t, { branchRef })));
    t.is(err.code, 'invalid_ref', JSON.stringify(branchRef));
  }
  for (const commitSha of ['abc', 'F'.repeat(40), `-${'a'.repeat(39)}`, `${shas.main}^`]) {
    const err = await sourceError(t, fetchCommit(request(t, { branchRef: null, commitSha })));
    t.is(err.code, 'invalid_ref', commitSha);
  }
});

test('ref names are judged as git check-ref-format judges them', (t) => {
  const names = [
    'main',
    'feature/x',
    'release/1.2.3',
    'a.b',
    'v1.0',
    'caf\u00e9',
    'a-b_c+d=e,f',
    'x@y',
    '@',
    'HEAD',
    'head',
    '-x',
    'x-',
    '.x',
    'x/.y',
    'x.',
    'x/',
    '/x',
    'x//y',
    'a..b',
    'a.lock',
    'a/b.lock/c',
    'a.lockx',
    'a b',
    'a\tb',
    'a\u007fb',
    'a~1',
    'a^',
    'a:b',
    'a?',
    'a*',
    'a[b',
    'a]b',
    'a\\b',
    '@{-1}',
    'a@{b',
    'a{b}',
    'x/@',
    '@/x',
    'a.',
    '.hidden',
    'a/.b',
    'foo.lock/bar',
    'release/1.0.',
    'refs/tags/v1.0',
    'refs/heads/.x',
  ];
  for (const name of names) {
    const asBranch = spawnSync('git', ['check-ref-format', '--branch', name], { encoding: 'utf8' });
    const gitSaysBranch = asBranch.status === 0 && asBranch.stdout.trim() === name;
    t.is(
      isValidRefName(`refs/heads/${name}`, name),
      gitSaysBranch,
      `branch ${JSON.stringify(name)}`,
    );
    for (const full of [`refs/heads/${name}`, `refs/tags/${name}`, name]) {
      const gitSaysRef = spawnSync('git', ['check-ref-format', full]).status === 0;
      t.is(isValidRefName(full, null), gitSaysRef, `ref ${JSON.stringify(full)}`);
    }
    // What a client sends (a branch name, or a full `refs/...`): the API and the worker accept
    // exactly what git accepts, refusing with a reason.
    const gitSaysClientRef = name.startsWith('refs/')
      ? spawnSync('git', ['check-ref-format', name]).status === 0
      : gitSaysBranch;
    const problem = refNameProblem(name);
    t.is(problem === null, gitSaysClientRef, `client ref ${JSON.stringify(name)}: ${problem}`);
  }
});

test('local sources need a workspace the policy names; other URLs must follow the rules', async (t) => {
  for (const url of [sourceDir, `file://${sourceDir}`, `FILE://${sourceDir}`]) {
    const err = await sourceError(t, fetchCommit(request(t, { url, policy: strictPolicy })));
    t.is(err.code, 'local_repository_not_allowed', url);
  }
  for (const url of [
    `ext::sh -c touch% ${marker}`,
    '-uhttps://x/y',
    'http://example.com/r.git',
    'git://example.com/r',
    'relative/path',
  ]) {
    const err = await sourceError(t, fetchCommit(request(t, { url })));
    t.is(err.code, 'invalid_repository_url', url);
  }
  t.false(fs.existsSync(marker));
});

test('a local path that is not a repository is source_unreachable', async (t) => {
  const url = path.join(root, 'does-not-exist');
  const err = await sourceError(t, fetchCommit(request(t, { url })));
  t.is(err.code, 'source_unreachable');
  t.regex(err.message, /does not appear to be a git repository/);
  const err2 = await sourceError(
    t,
    fetchCommit(request(t, { url, branchRef: null, commitSha: shas.main })),
  );
  t.is(err2.code, 'source_unreachable');
});

// --- reading -------------------------------------------------------------------------------

test('listTree lists every file, symlink and nested path with mode and size', async (t) => {
  const req = request(t, { branchRef: 'main' });
  const { commitSha } = await fetchCommit(req);
  const entries = await listTree(req.workDir, commitSha);
  const byPath = new Map(entries.map((e) => [e.path, e]));
  t.deepEqual(
    [...byPath.keys()].sort(),
    ['README.md', 'bytes.bin', 'dir/sub/nested.txt', 'link', 'run.sh', ...oddNames].sort(),
  );
  t.like(byPath.get('README.md'), { kind: 'file', mode: '100644', size: 6 });
  t.like(byPath.get('dir/sub/nested.txt'), { kind: 'file', mode: '100644', size: 15 });
  t.like(byPath.get('bytes.bin'), { kind: 'file', mode: '100644', size: 256 });
  t.like(byPath.get('run.sh'), { kind: 'file', mode: '100755' });
  t.like(byPath.get('link'), {
    kind: 'symlink',
    mode: '120000',
    size: 'dir/sub/nested.txt'.length,
  });
  for (const e of entries) {
    t.is(e.objectId, git(sourceDir, 'rev-parse', `main:${e.path}`));
  }
  await sourceError(t, listTree(req.workDir, 'e'.repeat(40))).then((err) =>
    t.is(err.code, 'commit_not_found'),
  );
  await sourceError(t, listTree(req.workDir, 'main')).then((err) => t.is(err.code, 'invalid_ref'));
});

for (const how of ['streamed', 'launched'] as const)
  test(`readBlobs returns exact bytes in order through one cat-file, symlinks as their target (${how})`, async (t) => {
    const req = request(t, { branchRef: 'main' });
    const { commitSha } = await fetchCommit(req);
    const entries = await listTree(req.workDir, commitSha);
    const ids = [...entries.map((e) => e.objectId), entries[0]!.objectId];
    const got: Array<[string, Buffer]> = [];
    // Given the blobs' total size, a small read runs through the process launcher (issue 24).
    const total = how === 'launched' ? entries.reduce((n, e) => n + e.size, 0) : undefined;
    await readBlobs(
      req.workDir,
      ids,
      async (id, data) => {
        await new Promise((r) => setTimeout(r, 1));
        got.push([id, data]);
      },
      total,
    );
    t.deepEqual(
      got.map(([id]) => id),
      ids,
    );
    const content = new Map(got);
    for (const e of entries) {
      const expected =
        e.kind === 'symlink'
          ? Buffer.from(fs.readlinkSync(path.join(sourceDir, e.path)))
          : fs.readFileSync(path.join(sourceDir, e.path));
      t.true(content.get(e.objectId)!.equals(expected), e.path);
    }
    const bytes = entries.find((e) => e.path === 'bytes.bin')!;
    t.true(content.get(bytes.objectId)!.equals(allBytes));
    const link = entries.find((e) => e.path === 'link')!;
    t.is(content.get(link.objectId)!.toString(), 'dir/sub/nested.txt');
  });

test('readBlobs stops git when onBlob throws, and refuses missing objects and bad ids', async (t) => {
  const req = request(t, { branchRef: 'main' });
  const { commitSha } = await fetchCommit(req);
  const ids = (await listTree(req.workDir, commitSha)).map((e) => e.objectId);
  const err = await t.throwsAsync(
    readBlobs(req.workDir, ids, () => Promise.reject(new Error('consumer failed'))),
  );
  t.is(err?.message, 'consumer failed');
  t.deepEqual(processesMentioning(req.workDir), []);

  await t.throwsAsync(
    readBlobs(req.workDir, [ids[0]!, 'd'.repeat(40)], async () => undefined),
    {
      message: /is not in the repository/,
    },
  );
  await t.throwsAsync(
    readBlobs(req.workDir, [`${ids[0]!}\nHEAD`], async () => undefined),
    {
      instanceOf: TypeError,
    },
  );
  await t.throwsAsync(
    readBlobs(req.workDir, [ids[0]!, 'd'.repeat(40)], async () => undefined, 100),
    { message: /is not in the repository/ },
    'through the launcher',
  );
  await t.throwsAsync(
    readBlobs(req.workDir, [commitSha], async () => undefined, 100),
    { message: /is a commit, not a blob/ },
    'through the launcher',
  );
  await t.throwsAsync(
    readBlobs(req.workDir, [commitSha], async () => undefined),
    {
      message: /is a commit, not a blob/,
    },
  );
});

// --- hostile repositories ------------------------------------------------------------------

test('hooks, submodules and attributes of a hostile repository never run anything', async (t) => {
  const dir = path.join(root, 'hostile');
  initRepo(dir);
  fs.writeFileSync(
    path.join(dir, '.gitmodules'),
    `[submodule "evil"]\n\tpath = evil\n\turl = ext::sh -c touch% ${marker}\n`,
  );
  fs.writeFileSync(path.join(dir, '.gitattributes'), '* filter=evil diff=evil\n');
  fs.mkdirSync(path.join(dir, '.githooks'));
  fs.writeFileSync(path.join(dir, '.githooks', 'post-checkout'), `#!/bin/sh\ntouch '${marker}'\n`, {
    mode: 0o755,
  });
  git(dir, 'add', '-A');
  git(dir, 'update-index', '--add', '--cacheinfo', `160000,${shas.main},evil`);
  git(dir, 'commit', '--quiet', '--no-verify', '-m', 'hostile');
  // The source repository's own config and hooks: all would run something if ever used.
  git(dir, 'config', 'core.hooksPath', '.githooks');
  git(dir, 'config', 'core.fsmonitor', `touch ${marker}`);
  git(dir, 'config', 'filter.evil.smudge', `touch ${marker}`);
  git(dir, 'config', 'uploadpack.packObjectsHook', `touch ${marker}`);
  installHooks(path.join(dir, '.git'));

  const req = request(t, { url: dir, branchRef: 'main' });
  const { commitSha } = await fetchCommit(req);
  const entries = await listTree(req.workDir, commitSha);
  t.like(
    entries.find((e) => e.path === 'evil'),
    { kind: 'submodule', mode: '160000', objectId: shas.main, size: 0 },
  );
  const blobs = entries.filter((e) => e.kind !== 'submodule').map((e) => e.objectId);
  await readBlobs(req.workDir, blobs, async () => undefined);
  // Fetching by commit too.
  await fetchCommit(request(t, { url: `file://${dir}`, branchRef: null, commitSha }));
  t.false(fs.existsSync(marker));
  t.false(fs.existsSync(path.join(req.workDir, 'repo.git', 'modules')));
});

test('a .gitmodules with a command as update is rejected by fsck', async (t) => {
  const dir = path.join(root, 'evil-update');
  initRepo(dir);
  fs.writeFileSync(
    path.join(dir, '.gitmodules'),
    `[submodule "x"]\n\tpath = x\n\turl = https://example.invalid/x\n\tupdate = !touch ${marker}\n`,
  );
  git(dir, 'add', '-A');
  git(dir, 'update-index', '--add', '--cacheinfo', `160000,${shas.main},x`);
  git(dir, 'commit', '--quiet', '--no-verify', '-m', 'evil update');
  const err = await sourceError(t, fetchCommit(request(t, { url: dir, branchRef: 'main' })));
  t.is(err.code, 'repository_rejected');
  t.regex(err.message, /gitmodulesUpdate/);
  t.false(fs.existsSync(marker));
});

test('trees with path-traversal names are rejected by fsck', async (t) => {
  for (const name of ['..', '.git', '.GIT', 'a/b']) {
    const dir = fs.mkdtempSync(path.join(root, 'traversal-'));
    initRepo(dir);
    const blob = gitInput(dir, 'payload\n', 'hash-object', '-w', '--stdin');
    const tree = gitInput(
      dir,
      Buffer.concat([Buffer.from(`100644 ${name}\0`), Buffer.from(blob, 'hex')]),
      'hash-object',
      '-t',
      'tree',
      '-w',
      '--literally',
      '--stdin',
    );
    const commit = git(dir, 'commit-tree', '-m', 'traversal', tree);
    git(dir, 'update-ref', 'refs/heads/main', commit);
    const err = await sourceError(t, fetchCommit(request(t, { url: dir, branchRef: 'main' })));
    t.is(err.code, 'repository_rejected', name);
  }
});

// --- timeouts ------------------------------------------------------------------------------

test('an ssh host that never answers times out and leaves no process behind', async (t) => {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.resume(); // read (and drop) what ssh sends, so that its closing is seen
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const { port } = server.address() as net.AddressInfo;

  // ssh enabled for the workspace, the loopback address allowed by the operator.
  const knownHosts = path.join(root, 'known_hosts_empty');
  fs.writeFileSync(knownHosts, '');
  const req = request(t, {
    url: `ssh://git@127.0.0.1:${port}/x`,
    policy: {
      ...strictPolicy,
      sshWorkspaces: { 'local-ws': { knownHostsFile: knownHosts, identityFile: null } },
      allowedHosts: ['127.0.0.1'],
    },
    // Long enough for git and ssh to start and connect on a busy machine (the suite runs test
    // files side by side): the point is that ssh reached the server and was then cut off.
    timeoutMs: 4000,
  });
  const started = Date.now();
  const err = await sourceError(t, fetchCommit(req));
  const elapsed = Date.now() - started;
  t.is(err.code, 'source_timeout');
  t.true(elapsed >= 3900 && elapsed < 9000, `took ${elapsed} ms`);
  t.true(connections >= 1, 'ssh reached the server');
  // ssh was killed with git: its connection closes, and nothing mentions the work dir or port.
  for (let i = 0; i < 50 && sockets.size > 0; i++) await new Promise((r) => setTimeout(r, 50));
  t.is(sockets.size, 0);
  t.deepEqual(processesMentioning(req.workDir), []);
  t.deepEqual(
    processesMentioning(`${port}`).filter((p) => /ssh|git/.test(p)),
    [],
  );
});

test('a tiny deadline on a local fetch is source_timeout', async (t) => {
  const req = request(t, { url: sourceDir, branchRef: 'main', timeoutMs: 1 });
  const err = await sourceError(t, fetchCommit(req));
  t.is(err.code, 'source_timeout');
  t.deepEqual(processesMentioning(req.workDir), []);
});

// --- messages ------------------------------------------------------------------------------

test('credentials are redacted from messages', (t) => {
  t.is(
    redact("fatal: unable to access 'https://ghp_secret@github.com/o/r.git/': 403"),
    "fatal: unable to access 'https://***@github.com/o/r.git/': 403",
  );
  t.is(redact('ssh://me:hunter2@host/x'), 'ssh://me:***@host/x');
  t.is(redact('https://h/r.git?private_token=abc&x=1'), 'https://h/r.git?private_token=***&x=1');
  t.is(redact('ssh://git@host/x'), 'ssh://git@host/x');
});

test('a failure message keeps the cause git gives: each line once, the fatal line first, bounded', (t) => {
  const noise = 'remote: error: inflate: data stream error (incorrect header check)';
  const stderr = [
    ...Array.from({ length: 6 }, () => noise),
    'error: git upload-pack: git-pack-objects died with error.',
    'remote: fatal: loose object 310f39 (stored in ./objects/31/0f39) is corrupt',
    'fatal: early EOF',
  ].join('\n');
  const text = summarize(stderr);
  t.true(text.startsWith('remote: fatal: loose object 310f39'), text);
  t.regex(text, /is corrupt/);
  t.is(text.split(noise).length - 1, 1, 'a repeated line is said once');
  t.true(summarize(`fatal: ${'x'.repeat(900)}`).length <= 500);
  t.is(summarize(''), 'git failed without a message');
});

// --- the source policy at fetch time -------------------------------------------------------

/** A loopback TCP listener that counts connections (and closes each at once). */
async function countingListener(
  t: ExecutionContext,
  host = '127.0.0.1',
): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections };
}

test('internal hosts in every spelling are refused at fetch time, before any connection', async (t) => {
  const listener = await countingListener(t);
  const port = listener.port;
  const sshEverywhere: SourcePolicy = {
    ...strictPolicy,
    sshWorkspaces: { 'local-ws': { knownHostsFile: '/dev/null', identityFile: null } },
  };
  const urls = [
    `https://127.0.0.1:${port}/r.git`,
    `https://2130706433:${port}/r.git`,
    `https://0x7f000001:${port}/r.git`,
    `https://0x7F.1:${port}/r.git`,
    `https://017700000001:${port}/r.git`,
    `https://127.1:${port}/r.git`,
    `https://localhost:${port}/r.git`,
    `https://localhost.:${port}/r.git`,
    `https://LOCALHOST:${port}/r.git`,
    `https://api.localhost:${port}/r.git`,
    `https://[::1]:${port}/r.git`,
    `https://[::ffff:127.0.0.1]:${port}/r.git`,
    `https://[::ffff:7f00:1]:${port}/r.git`,
    `https://[0:0:0:0:0:0:0:1]:${port}/r.git`,
    `https://%31%32%37.0.0.1:${port}/r.git`,
    'https://169.254.169.254/latest/meta-data',
    'https://metadata.google.internal/computeMetadata/v1',
    'https://metadata/computeMetadata/v1',
    'https://[fd00:ec2::254]/latest/meta-data',
    'https://10.0.0.1/r.git',
    'https://172.16.5.4/r.git',
    'https://192.168.1.1/r.git',
    'https://100.64.0.1/r.git',
    'https://224.0.0.1/r.git',
    'https://0.0.0.0/r.git',
    'https://[::]/r.git',
    'https://[fe80::1]/r.git',
    'https://[fc00::1]/r.git',
    'https://[ff02::1]/r.git',
    'https://[64:ff9b::7f00:1]/r.git',
    'https://[2002:7f00:1::]/r.git',
    `ssh://git@127.0.0.1:${port}/r.git`,
    `ssh://git@2130706433:${port}/r.git`,
    'git@127.1:r.git',
    'git@169.254.169.254:r.git',
    `ssh://git@[::1]:${port}/r.git`,
  ];
  for (const url of urls) {
    const err = await sourceError(t, fetchCommit(request(t, { url, policy: sshEverywhere })));
    t.is(err.code, 'repository_host_not_allowed', url);
  }
  t.is(listener.connections(), 0);
});

test('a name that resolves to an internal address is refused at fetch time; the worker never connects', async (t) => {
  const listener = await countingListener(t);
  // Through the system resolver: this machine's own name resolves to loopback or a private
  // address (/etc/hosts), never a public one.
  const own = `https://${os.hostname()}:${listener.port}/r.git`;
  const err = await sourceError(t, fetchCommit(request(t, { url: own, policy: strictPolicy })));
  t.is(err.code, 'repository_host_not_allowed', own);
  t.regex(err.message, /resolves to a .* address/);
  // A resolver answering loopback (alone, or among public addresses) is refused the same way.
  for (const answer of [['127.0.0.1'], ['93.184.215.14', '127.0.0.1'], ['::ffff:10.0.0.1']]) {
    const url = `https://git.example.com:${listener.port}/r.git`;
    const lookup = () => Promise.resolve(answer);
    const refused = await sourceError(
      t,
      fetchCommit(request(t, { url, policy: strictPolicy, lookup })),
    );
    t.is(refused.code, 'repository_host_not_allowed', answer.join(','));
  }
  t.is(listener.connections(), 0);
});

test('git connects to the checked address only (pinned), and failures do not tell open ports from closed', async (t) => {
  const listener = await countingListener(t);
  // pinned.invalid resolves nowhere: reaching the listener proves git used the checked address
  // instead of resolving the name again.
  let lookups = 0;
  const lookup = () => {
    lookups += 1;
    return Promise.resolve(['127.0.0.1']);
  };
  const policy = { ...strictPolicy, allowedHosts: ['127.0.0.0/8'] };
  const open = await sourceError(
    t,
    fetchCommit(
      request(t, { url: `https://pinned.invalid:${listener.port}/r.git`, policy, lookup }),
    ),
  );
  t.is(lookups, 1);
  t.true(listener.connections() >= 1, 'git reached the pinned address');
  t.is(open.code, 'source_unreachable');

  // A closed port: the same code and the same message, no stderr in the details.
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const shut = await sourceError(
    t,
    fetchCommit(request(t, { url: `https://pinned.invalid:${closedPort}/r.git`, policy, lookup })),
  );
  t.is(shut.code, 'source_unreachable');
  t.is(
    shut.message.replace(String(closedPort), 'PORT'),
    open.message.replace(String(listener.port), 'PORT'),
  );
  t.deepEqual(Object.keys(shut.details), ['url']);
  t.deepEqual(Object.keys(open.details), ['url']);
  t.notRegex(open.message, /reset|connection refused|handshake|TLS|gnutls|port/i);

  // An IPv6 literal host (allowed here) is fetched from as written: git reaches it.
  const v6 = await countingListener(t, '::1');
  const literal = await sourceError(
    t,
    fetchCommit(
      request(t, {
        url: `https://[::1]:${v6.port}/r.git`,
        policy: { ...strictPolicy, allowedHosts: ['::1'] },
      }),
    ),
  );
  t.is(literal.code, 'source_unreachable');
  t.true(v6.connections() >= 1, 'git reached the IPv6 literal host');

  // A name that does not resolve: the same code.
  const unresolved = await sourceError(
    t,
    fetchCommit(
      request(t, {
        url: 'https://nowhere.invalid/r.git',
        policy,
        lookup: () => Promise.reject(new Error('ENOTFOUND')),
      }),
    ),
  );
  t.is(unresolved.code, 'source_unreachable');
});

test.serial(
  'an ssh source runs ssh with the pinned address, strict host keys from the operator file and no agent',
  async (t) => {
    const listener = await countingListener(t);
    // A stand-in `ssh` first on PATH records its arguments and environment: git starts it through
    // the real GIT_SSH_COMMAND of the launcher, with the environment the launcher gives git.
    const bin = path.join(root, 'fake-ssh-bin');
    const record = path.join(root, 'ssh-record.txt');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(
      path.join(bin, 'ssh'),
      `#!/bin/sh\n{ printf '%s\\n' "$@"; echo ---; env; } > '${record}'\nexit 255\n`,
      { mode: 0o755 },
    );
    const knownHosts = path.join(root, 'operator_known_hosts');
    fs.writeFileSync(knownHosts, '');
    const saved = { PATH: process.env.PATH, SSH_AUTH_SOCK: process.env.SSH_AUTH_SOCK };
    process.env.PATH = `${bin}:${process.env.PATH ?? ''}`;
    process.env.SSH_AUTH_SOCK = path.join(root, 'operator-agent.sock');
    try {
      const err = await sourceError(
        t,
        fetchCommit(
          request(t, {
            url: `ssh://git@git.example.com:${listener.port}/r.git`,
            policy: {
              ...strictPolicy,
              sshWorkspaces: { 'local-*': { knownHostsFile: knownHosts, identityFile: null } },
              allowedHosts: ['127.0.0.1'],
            },
            lookup: () => Promise.resolve(['127.0.0.1']),
          }),
        ),
      );
      t.is(err.code, 'source_unreachable');
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    const [args, env] = fs.readFileSync(record, 'utf8').split('\n---\n') as [string, string];
    const argv = args.split('\n');
    for (const option of [
      'StrictHostKeyChecking=yes',
      `UserKnownHostsFile=${knownHosts}`,
      'GlobalKnownHostsFile=/dev/null',
      'HostKeyAlias=git.example.com',
      'HostName=127.0.0.1',
      'IdentityAgent=none',
      'IdentityFile=none',
      'BatchMode=yes',
    ]) {
      t.true(argv.includes(option), option);
    }
    t.true(argv.includes('-F') && argv[argv.indexOf('-F') + 1] === '/dev/null');
    t.false(argv.some((a) => /accept-new/.test(a)));
    t.notRegex(env, /SSH_AUTH_SOCK/);
    t.regex(env, /^GIT_CONFIG_GLOBAL=\/dev\/null$/m);
    t.regex(env, /^GIT_CONFIG_NOSYSTEM=1$/m);
    t.is(listener.connections(), 0, 'the stand-in ssh connected nowhere');
  },
);

test.serial(
  "the environment given to git holds nothing of the operator's: no agent, no config, no askpass",
  (t) => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      SSH_AUTH_SOCK: '/run/agent.sock',
      SSH_ASKPASS: '/usr/bin/ssh-askpass',
      GIT_ASKPASS: '/usr/bin/ask',
      GIT_CONFIG_GLOBAL: '/home/op/.gitconfig',
      GIT_SSH: '/usr/bin/op-ssh',
      GIT_SSL_NO_VERIFY: '1',
      HOME: '/home/op',
    });
    try {
      const env = gitEnv('/tmp/work-x', null);
      t.is(env.SSH_AUTH_SOCK, undefined);
      t.is(env.SSH_ASKPASS, undefined);
      t.is(env.GIT_SSH, undefined);
      t.is(env.GIT_SSL_NO_VERIFY, undefined);
      t.is(env.GIT_CONFIG_GLOBAL, '/dev/null');
      t.is(env.GIT_CONFIG_NOSYSTEM, '1');
      t.is(env.GIT_TERMINAL_PROMPT, '0');
      t.is(env.HOME, '/tmp/work-x');
      t.not(env.GIT_ASKPASS, '/usr/bin/ask');
      t.is(env.GIT_ALLOW_PROTOCOL, 'none');
      t.regex(env.GIT_SSH_COMMAND ?? '', /UserKnownHostsFile=\/dev\/null/);
      t.regex(env.GIT_SSH_COMMAND ?? '', /IdentityAgent=none/);
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
  },
);

test('local sources: FILE:/// in any case is read; the service folders are not, even through a link', async (t) => {
  const fetched = await fetchCommit(request(t, { url: `FILE://${sourceDir}` }));
  t.is(fetched.commitSha, shas.main);

  // Tenant A's repository in the service's folder, and a link from elsewhere that leads there.
  const serviceDir = path.join(root, 'service-data');
  const inside = path.join(serviceDir, 'tenant-a-repo.git');
  fs.mkdirSync(serviceDir, { recursive: true });
  if (!fs.existsSync(inside)) git(root, 'clone', '--quiet', '--bare', sourceDir, inside);
  const link = path.join(root, 'innocent-link');
  if (!fs.existsSync(link)) fs.symlinkSync(serviceDir, link);
  const policy: SourcePolicy = { ...localPolicy, protectedPaths: [serviceDir] };
  for (const url of [inside, `file://${inside}`, path.join(link, 'tenant-a-repo.git')]) {
    const err = await sourceError(t, fetchCommit(request(t, { url, policy })));
    t.is(err.code, 'repository_path_protected', url);
  }
  // The same repository is read when the folder is not protected (the refusal is the policy's).
  const unprotected = await fetchCommit(request(t, { url: path.join(link, 'tenant-a-repo.git') }));
  t.is(unprotected.commitSha, shas.main);
  // An exempt folder inside a protected one (npm start's demo repository) is read.
  const exempt = await fetchCommit(
    request(t, { url: inside, policy: { ...policy, exemptPaths: [inside] } }),
  );
  t.is(exempt.commitSha, shas.main);
});
