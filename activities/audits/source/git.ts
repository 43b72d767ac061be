/**
 * Fetches one commit of a tenant's repository with the git CLI and reads its tree and blobs.
 *
 * The repository is untrusted input, and so is its URL (already checked when it was registered,
 * re-checked here by the source policy, platform/source-access.ts). Every safety measure is
 * listed next to the code that applies it; in short:
 * - The policy decides where git may go: a local folder of an operator-named workspace (its real
 *   path), or one checked address of an https/ssh host, which git is pinned to (no second name
 *   resolution). Redirects are not followed.
 * - git is always run with an argument array (never a shell) and a minimal, fixed environment:
 *   no user/system config, no credential helpers, no ssh agent, no prompts, and only the one
 *   transport of the source (https, ssh or file).
 * - The commit is fetched into a bare repository: nothing from the repository is ever checked
 *   out, so no hook, filter, submodule or symlink of it can act on this machine; the caller only
 *   gets object contents as buffers.
 * - Incoming objects are fsck-checked, with the path-traversal findings promoted to errors.
 * - Each fetch has one deadline; on expiry the whole process group of git (ssh, remote helpers,
 *   upload-pack...) is killed before `source_timeout` is thrown.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { SourcePolicy, WorkspaceRef } from '../../../domain/repositories/source-policy';
import { resolveSource, type Lookup, type SourceTarget } from '../../../platform/source-access';
import { fullRefOf, refNameProblem } from '../../../domain/repositories/git-ref';
import { SourceError } from '../../../domain/audits/source-error';
import { killGroup, runCommand, spawnDetached, TailBuffer } from './process-launcher';

export interface FetchRequest {
  /** Repository URL: https://, ssh://, git@host:path, a local path or file:/// (as the policy allows). */
  url: string;
  /** A branch name (meaning refs/heads/<name>) or a full ref (refs/tags/v1); null with commitSha. */
  branchRef: string | null;
  /** 40 hex. When given, exactly this commit is fetched; branchRef (if any) is only recorded. */
  commitSha: string | null;
  /** An empty directory owned by the caller (created and removed by the caller). */
  workDir: string;
  /** The workspace whose repository this is, and the operator's source policy. */
  workspace: WorkspaceRef;
  policy: SourcePolicy;
  /** How host names are resolved (default: the system resolver); tests pass their own. */
  lookup?: Lookup;
  /** Deadline of the whole fetch; git is killed on expiry -> SourceError('source_timeout'). */
  timeoutMs: number;
  /**
   * A branch to find the merge-base with (the repository's default branch, for an audit of
   * another branch). Both histories are then fetched whole.
   */
  baseRef?: string | null;
}

export interface FetchedCommit {
  /** Full 40-hex sha of the fetched commit. */
  commitSha: string;
  /** The full ref that was fetched or recorded (refs/heads/<branch>, refs/tags/...), or null. */
  ref: string | null;
  /** With `baseRef`: the merge-base of the commit with it, or null (no such branch, no common history). */
  mergeBase?: string | null;
}

export interface TreeEntry {
  /** Path as git stores it ('/'-separated, not quoted; bytes that are not UTF-8 become U+FFFD). */
  path: string;
  mode: string;
  kind: 'file' | 'symlink' | 'submodule';
  objectId: string;
  /** Blob size in bytes; 0 for submodules. */
  size: number;
}

/**
 * Test seam: extra `-c name=value` settings appended to every git invocation. Never set outside
 * tests (the tests use it to force protocol v0, whose servers refuse unadvertised commits).
 */
export const gitTestOverrides: { extraConfig: string[] } = { extraConfig: [] };

const SHA_RE = /^[0-9a-f]{40}$/;
/** How much of git's stderr is kept (the tail) for error messages. */
const STDERR_LIMIT = 4096;
/** Bound on stdout of the small commands whose output is read as a whole (rev-parse...). */
const STDOUT_LIMIT = 64 * 1024;
/** Bound on a commit's tree listing (ls-tree -r -l -z: ~100 bytes per file; ~2.5M files). */
const TREE_LISTING_LIMIT = 256 * 1024 * 1024;
/** The fetched commit is kept under this local ref (never a name chosen by the tenant). */
const FETCHED_REF = 'refs/archaudit/fetched';
/** The base branch's tip, when a merge-base is asked for. */
const BASE_REF = 'refs/archaudit/base';

/** The bare repository inside the caller's workDir. */
function gitDirOf(workDir: string): string {
  return path.join(workDir, 'repo.git');
}

// ---------------------------------------------------------------------------------------------
// Environment and configuration of every git invocation
// ---------------------------------------------------------------------------------------------

/**
 * An askpass program that answers every prompt with nothing: a credential prompt can never block
 * on a terminal or reach a GUI helper, and no text is sent as a password (`echo` would send the
 * prompt itself).
 */
const ASKPASS = ['/usr/bin/true', '/bin/true'].find((p) => fs.existsSync(p)) ?? 'true';

/** Variables passed through from our own environment: finding programs, proxies, TLS roots.
 *  Nothing else is inherited (GIT_DIR, GIT_CONFIG_*, GIT_SSH, GIT_TRACE, GIT_SSL_NO_VERIFY,
 *  DISPLAY/SSH_ASKPASS, and the operator's SSH_AUTH_SOCK, which would lend any tenant the
 *  operator's keys, would all change git's behaviour). */
const PASSTHROUGH_ENV = [
  'PATH',
  'TMPDIR',
  'http_proxy',
  'https_proxy',
  'HTTPS_PROXY',
  'no_proxy',
  'NO_PROXY',
  'all_proxy',
  'ALL_PROXY',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
];

/** POSIX shell quoting of one word (GIT_SSH_COMMAND is run by a shell). */
const shellWord = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;

/**
 * The ssh command of an ssh source: no configuration file, no agent, only the operator's key for
 * the workspace, host keys checked strictly against the operator's known-hosts file (never
 * trusted on first use, never written), connected to the checked address whatever the name
 * resolves to now. Without an ssh target, a command that can reach nothing.
 */
export function sshCommand(target: SourceTarget | null): string {
  const common = [
    'ssh',
    '-F',
    '/dev/null',
    '-o',
    'BatchMode=yes',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'UpdateHostKeys=no',
    '-o',
    'CheckHostIP=no',
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'IdentityAgent=none',
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'ForwardAgent=no',
    '-o',
    'ClearAllForwardings=yes',
    '-o',
    'PermitLocalCommand=no',
    '-o',
    'ProxyCommand=none',
    '-o',
    'ProxyJump=none',
    '-o',
    'ConnectTimeout=20',
  ];
  if (target?.kind !== 'ssh' || target.ssh === null) {
    return [...common, '-o', 'UserKnownHostsFile=/dev/null', '-o', 'IdentityFile=none'].join(' ');
  }
  return [
    ...common,
    '-o',
    shellWord(`UserKnownHostsFile=${target.ssh.knownHostsFile}`),
    '-o',
    shellWord(`IdentityFile=${target.ssh.identityFile ?? 'none'}`),
    '-o',
    shellWord(`HostKeyAlias=${target.host}`),
    '-o',
    shellWord(`HostName=${target.address}`),
  ].join(' ');
}

/** The git transport a target uses (`none` for commands that use no transport). */
const protocolOf = (target: SourceTarget | null) =>
  target === null ? 'none' : target.kind === 'local' ? 'file' : target.kind;

/**
 * The environment of every git command: nothing ambient. Exported for its test (which checks
 * that the operator's ssh agent and git settings never reach git).
 */
export function gitEnv(workDir: string, target: SourceTarget | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSTHROUGH_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return {
    ...env,
    // No prompt ever: git fails instead of asking for a username/password (SSH_ASKPASS is unset
    // because nothing is inherited; GCM_INTERACTIVE covers Git Credential Manager if installed).
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: ASKPASS,
    GCM_INTERACTIVE: 'never',
    // No system or global config (url.*.insteadOf, credential helpers, core.sshCommand, aliases,
    // http.sslVerify=false...): HOME points at the caller's empty workDir, XDG too.
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    HOME: workDir,
    XDG_CONFIG_HOME: workDir,
    // ssh never prompts (BatchMode) and is pinned as sshCommand says. The only thing git runs
    // through a shell; its variable parts are quoted.
    GIT_SSH_COMMAND: sshCommand(target),
    // The one transport git may use, for the URL and for anything it leads to (redirects,
    // submodules...): `ext::` (runs commands), git://, http:// and the others are refused.
    GIT_ALLOW_PROTOCOL: protocolOf(target),
    GIT_PROTOCOL_FROM_USER: '0',
    // Objects are what their ids say (no refs/replace substitution).
    GIT_NO_REPLACE_OBJECTS: '1',
    // Stable, parseable messages.
    LC_ALL: 'C',
    LANG: 'C',
    LANGUAGE: 'C',
  };
}

/** `-c` settings of every invocation (they also apply to the git processes git itself starts). */
function gitConfig(target: SourceTarget | null): string[] {
  const settings = [
    // No hook ever runs, and no fsmonitor daemon is started.
    'core.hooksPath=/dev/null',
    'core.fsmonitor=false',
    // Belt and braces: nothing is checked out (bare repository), so no symlink is created.
    'core.symlinks=false',
    // No credential helper (an empty value clears the list).
    'credential.helper=',
    // Transports, in config form as well as GIT_ALLOW_PROTOCOL.
    'protocol.allow=never',
    ...(['https', 'ssh', 'file'] as const).map(
      (p) => `protocol.${p}.allow=${protocolOf(target) === p ? 'always' : 'never'}`,
    ),
    'protocol.ext.allow=never',
    // https: connect to the checked address only (curl's resolve list, so TLS still verifies
    // the name; an IP literal host needs none), and follow no redirect (it would lead to a host
    // nobody checked).
    ...(target?.kind === 'https' && target.host !== target.address
      ? [
          `http.curloptResolve=${target.host}:${target.port}:${target.address.includes(':') ? `[${target.address}]` : target.address}`,
        ]
      : []),
    'http.followRedirects=false',
    // Submodules are never fetched or cloned (their URLs come from the tenant's .gitmodules).
    'submodule.recurse=false',
    'fetch.recurseSubmodules=false',
    // Every received object is checked, strictly (malformed objects, malicious .gitmodules...).
    // Tree entries named `.`, `..`, `.git` (or its HFS/NTFS aliases), empty or containing `/`
    // are what path-traversal attacks on consumers of the paths are made of: strict mode already
    // refuses them; they are pinned as errors so that no other setting can relax them.
    'transfer.fsckObjects=true',
    'fetch.fsck.hasDot=error',
    'fetch.fsck.hasDotdot=error',
    'fetch.fsck.hasDotgit=error',
    'fetch.fsck.emptyName=error',
    'fetch.fsck.fullPathname=error',
    // No background work that could outlive the call (auto gc/maintenance detach by default).
    'gc.auto=0',
    'maintenance.auto=false',
    'fetch.writeCommitGraph=false',
    'init.defaultBranch=main',
  ];
  return [...settings, ...gitTestOverrides.extraConfig].flatMap((s) => ['-c', s]);
}

// ---------------------------------------------------------------------------------------------
// Running git
// ---------------------------------------------------------------------------------------------

function spawnGit(
  args: string[],
  opts: { workDir: string; target: SourceTarget | null; gitDir: boolean; stdin: boolean },
): ChildProcess {
  return spawnDetached('git', gitArgv(args, opts), {
    cwd: opts.workDir,
    env: gitEnv(opts.workDir, opts.target),
    stdin: opts.stdin,
  });
}

function gitArgv(
  args: string[],
  opts: { target: SourceTarget | null; gitDir: boolean; workDir: string },
) {
  return [
    ...gitConfig(opts.target),
    // An explicit repository: git never discovers one from the working directory.
    ...(opts.gitDir ? [`--git-dir=${gitDirOf(opts.workDir)}`] : []),
    ...args,
  ];
}

interface GitResult {
  code: number | null;
  stdout: string;
  /** All of stdout, when asked for with RunOptions.wholeStdoutLimit. */
  stdoutBytes?: Uint8Array;
  overflow?: boolean;
  /** Last STDERR_LIMIT bytes of stderr, credentials redacted. */
  stderr: string;
  timedOut: boolean;
}

interface RunOptions {
  workDir: string;
  /** Where the fetch goes (null: a command that uses no transport). */
  target: SourceTarget | null;
  /** Run against <workDir>/repo.git (every command but `init`). */
  gitDir?: boolean;
  /** Absolute deadline (epoch ms); the process group is killed when it passes. */
  deadline?: number;
  /** Keep all of stdout as bytes, up to this many (see RunRequest.wholeStdoutLimit). */
  wholeStdoutLimit?: number;
}

/**
 * Runs one git command to completion, capturing bounded output. Started by the process launcher
 * (process-launcher.ts): a fork of this large process costs its main thread milliseconds.
 */
async function runGit(args: string[], opts: RunOptions): Promise<GitResult> {
  const gitDir = opts.gitDir ?? true;
  const result = await runCommand({
    command: 'git',
    argv: gitArgv(args, { target: opts.target, gitDir, workDir: opts.workDir }),
    cwd: opts.workDir,
    env: gitEnv(opts.workDir, opts.target),
    ...(opts.deadline !== undefined ? { deadline: opts.deadline } : {}),
    ...(opts.wholeStdoutLimit !== undefined ? { wholeStdoutLimit: opts.wholeStdoutLimit } : {}),
    stdoutLimit: STDOUT_LIMIT,
    stderrLimit: STDERR_LIMIT,
  });
  return { ...result, stderr: redact(result.stderr) };
}

// ---------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------

/**
 * Removes credentials from text that is shown to the tenant or logged: userinfo of http(s) URLs
 * (a token is often passed as the user name), any `user:password@`, and token-like query
 * parameters.
 */
export function redact(text: string): string {
  return text
    .replace(/\b(https?:\/\/)[^\s/@'"]+@/gi, '$1***@')
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@'"]+):[^\s/@'"]+@/gi, '$1:***@')
    .replace(
      /([?&][^=&\s'"]*(?:token|key|secret|password|passwd|auth|sig|signature)[^=&\s'"]*=)[^&\s'"]+/gi,
      '$1***',
    );
}

/** The informative part of git's stderr for a one-line message. */
function summarize(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const important = lines.filter((l) => /^(fatal|error|remote|ERROR):/i.test(l));
  const text = (important.length > 0 ? important : lines.slice(-3)).join(' / ');
  return text.length > 500 ? `${text.slice(0, 497)}...` : text || 'git failed without a message';
}

/** Failures that retrying with another refspec cannot fix. */
const UNREACHABLE_RE = new RegExp(
  [
    'Could not resolve host',
    'Could not resolve hostname',
    'Connection refused',
    'Connection timed out',
    'No route to host',
    'Network is unreachable',
    'Permission denied \\(',
    'Authentication failed',
    'terminal prompts disabled',
    'could not read Username',
    'Host key verification failed',
    'does not appear to be a git repository',
    'Repository not found',
    "repository '[^']*' not found",
    'SSL certificate problem',
    'unable to access',
    'transport .* not allowed',
  ].join('|'),
  'i',
);
/** The received objects failed fsck. */
const REJECTED_RE = /fsck error|error: object [0-9a-f]{40}: [a-zA-Z]+:/;
/**
 * The source repository itself is damaged: its server could not read its own objects (git
 * upload-pack says "possible repository corruption on the remote side"), or sent a broken pack.
 * Retrying cannot help.
 */
const CORRUPT_RE = new RegExp(
  [
    'repository corruption',
    'loose object [0-9a-f]{40} .*is corrupt',
    'inflate: data stream error',
    'unable to unpack [0-9a-f]{40}',
    'bad pack header',
    'pack has bad object',
    'packfile .* cannot be accessed',
    'did not send all necessary objects',
  ].join('|'),
  'i',
);
/** The server does not support shallow fetches (dumb http). */
const NO_SHALLOW_RE = /does not support shallow|shallow capabilit/i;

// ---------------------------------------------------------------------------------------------
// fetchCommit
// ---------------------------------------------------------------------------------------------

/**
 * Fetches one commit of `req.url` into a bare repository at <workDir>/repo.git (read it with
 * listTree / readBlobs) and returns its full sha.
 */
export async function fetchCommit(req: FetchRequest): Promise<FetchedCommit> {
  const deadline = Date.now() + req.timeoutMs;
  const shownUrl = redact(req.url);

  // 1. The source policy, again: the settings may have changed since registration, a name may
  //    resolve elsewhere now, and this is the last line before git. After this check the URL
  //    cannot start with '-' (so it is never taken for an option), contains no `::` transport
  //    helper and no whitespace or control character; a local source is its real path, a host
  //    one checked address.
  const access = await resolveSource(req.url, req.workspace, req.policy, req.lookup);
  if (!access.ok) {
    if (access.code === 'unresolved') throw unreachable(shownUrl);
    throw new SourceError(access.code, `repository URL ${shownUrl}: ${access.reason}`, {
      url: shownUrl,
    });
  }
  const target = access.target;
  const network = target.kind !== 'local';

  // 2. The commit sha and the ref, first as strings (no '-' prefix, no revision syntax).
  if (req.commitSha !== null && !SHA_RE.test(req.commitSha)) {
    throw new SourceError('invalid_ref', 'commit sha must be 40 lowercase hex characters', {
      commitSha: req.commitSha,
    });
  }
  if (req.branchRef === null && req.commitSha === null) {
    throw new SourceError('invalid_ref', 'a branch or a commit sha is required');
  }
  const ref = req.branchRef === null ? null : checkedRef(req.branchRef);

  const opts: RunOptions = { workDir: req.workDir, target, deadline };
  // What a remote said is not repeated for network sources: it would tell an open port from a
  // closed one.
  const timeout = (stderr: string) =>
    new SourceError(
      'source_timeout',
      `fetching ${shownUrl} did not finish within ${req.timeoutMs} ms`,
      { url: shownUrl, timeoutMs: req.timeoutMs, ...(network ? {} : { stderr }) },
    );
  /** Runs a local (non-network) step; its failure is an error of ours, not of the source. */
  const local = async (args: string[], extra: Partial<RunOptions> = {}): Promise<GitResult> => {
    const res = await runGit(args, { ...opts, ...extra });
    if (res.timedOut) throw timeout(res.stderr);
    if (res.code !== 0) throw new Error(`git ${args[0]} failed: ${summarize(res.stderr)}`);
    return res;
  };

  // 3. A bare repository with no template (no sample hooks, nothing copied from the system):
  //    objects are all that is ever written from the source, and nothing is checked out.
  await local(['init', '--quiet', '--bare', '--template=', gitDirOf(req.workDir)], {
    gitDir: false,
  });

  // 4. The remote: the URL, or a local source's real path. `--` ends the options; neither can
  //    start with '-' anyway (step 1). From here on it only lives in the repository's config,
  //    never on a command line.
  await local(['remote', 'add', '--', 'origin', target.kind === 'local' ? target.path : req.url]);

  const fetchArgs = [
    'fetch',
    '--no-tags',
    '--no-recurse-submodules',
    '--no-write-fetch-head',
    '--no-auto-maintenance',
    '--no-auto-gc',
  ];
  // A merge-base needs both histories: no shallow fetch then.
  const wantsBase = req.baseRef !== undefined && req.baseRef !== null;
  const fetch = (refspecs: string[], shallow: boolean) =>
    runGit(
      [...fetchArgs, ...(shallow && !wantsBase ? ['--depth=1'] : []), 'origin', ...refspecs],
      opts,
    );
  /** The merge-base of `sha` with the base branch (checked like any ref), or null. */
  const mergeBaseOf = async (sha: string): Promise<{ mergeBase?: string | null }> => {
    if (!wantsBase) return {};
    const base = checkedRef(req.baseRef!);
    const got = await fetch([`+${base}:${BASE_REF}`], false);
    if (got.timedOut) throw timeout(got.stderr);
    if (got.code !== 0) return { mergeBase: null };
    const mb = await runGit(['merge-base', sha, BASE_REF], opts);
    if (mb.timedOut) throw timeout(mb.stderr);
    const found = mb.stdout.trim();
    return { mergeBase: mb.code === 0 && SHA_RE.test(found) ? found : null };
  };
  const failure = (res: GitResult): SourceError => {
    if (res.timedOut) return timeout(res.stderr);
    if (REJECTED_RE.test(res.stderr)) {
      return new SourceError(
        'repository_rejected',
        `git refused objects of ${shownUrl}: ${summarize(res.stderr)}`,
        { url: shownUrl, stderr: res.stderr },
      );
    }
    // Corruption is reported only after git spoke with the other side, so naming it reveals
    // nothing about the network; every other failure of a network source is one message.
    if (CORRUPT_RE.test(res.stderr)) {
      return new SourceError(
        'repository_corrupt',
        `the repository at ${shownUrl} is damaged: ${summarize(res.stderr)}`,
        { url: shownUrl, stderr: res.stderr },
      );
    }
    if (network) return unreachable(shownUrl);
    return new SourceError(
      'source_unreachable',
      `could not fetch from ${shownUrl}: ${summarize(res.stderr)}`,
      { url: shownUrl, stderr: res.stderr },
    );
  };

  if (req.commitSha !== null) {
    // 5a. A commit: ask for it directly (servers that allow any reachable commit, e.g. every
    //     protocol v2 server, send just it) ...
    const sha = req.commitSha;
    let res = await fetch([`+${sha}:${FETCHED_REF}`], true);
    if (res.code !== 0 && NO_SHALLOW_RE.test(res.stderr) && !res.timedOut) {
      res = await fetch([`+${sha}:${FETCHED_REF}`], false);
    }
    if (res.code !== 0) {
      if (
        res.timedOut ||
        UNREACHABLE_RE.test(res.stderr) ||
        REJECTED_RE.test(res.stderr) ||
        CORRUPT_RE.test(res.stderr)
      ) {
        throw failure(res);
      }
      // ... and when the server refuses unadvertised objects ("not our ref"), fetch every
      // branch and tag and look for the commit among them.
      res = await fetch(['+refs/heads/*:refs/remotes/origin/*', '+refs/tags/*:refs/tags/*'], false);
      if (res.code !== 0) throw failure(res);
    }
    // Present and a commit, in one process: rev-parse fails for a missing object.
    const present = await runGit(['rev-parse', '--verify', '--quiet', `${sha}^{commit}`], opts);
    if (present.timedOut) throw timeout(present.stderr);
    const resolved = present.stdout.trim();
    if (present.code !== 0 || !SHA_RE.test(resolved)) {
      throw new SourceError('commit_not_found', `commit ${sha} does not exist in ${shownUrl}`, {
        url: shownUrl,
        commitSha: sha,
      });
    }
    return { commitSha: resolved, ref, ...(await mergeBaseOf(resolved)) };
  }

  // 5b. A branch or a full ref: only its tip, under a local ref name of ours.
  const wanted = ref!;
  const spec = [`+${wanted}:${FETCHED_REF}`];
  let res = await fetch(spec, true);
  if (res.code !== 0 && NO_SHALLOW_RE.test(res.stderr) && !res.timedOut) {
    res = await fetch(spec, false);
  }
  if (res.code !== 0) {
    if (!res.timedOut && /couldn't find remote ref/i.test(res.stderr)) {
      const what = req.branchRef!.startsWith('refs/')
        ? `ref ${req.branchRef!}`
        : `branch ${req.branchRef!}`;
      throw new SourceError('branch_not_found', `${what} does not exist in ${shownUrl}`, {
        url: shownUrl,
        ref: wanted,
      });
    }
    throw failure(res);
  }
  const resolved = await runGit(
    ['rev-parse', '--verify', '--quiet', `${FETCHED_REF}^{commit}`],
    opts,
  );
  if (resolved.timedOut) throw timeout(resolved.stderr);
  const sha = resolved.stdout.trim();
  if (resolved.code !== 0 || !SHA_RE.test(sha)) {
    // e.g. a tag of a tree or a blob.
    throw new SourceError('invalid_ref', `${wanted} of ${shownUrl} does not point to a commit`, {
      url: shownUrl,
      ref: wanted,
    });
  }
  return { commitSha: sha, ref: wanted, ...(await mergeBaseOf(sha)) };
}

/** One answer for every network failure (no name, refused, reset, TLS, denied, not found). */
function unreachable(shownUrl: string): SourceError {
  return new SourceError(
    'source_unreachable',
    `could not fetch from ${shownUrl}: the host could not be reached, or it refused the request (check the URL and that the repository is readable without credentials or with the server's)`,
    { url: shownUrl },
  );
}

/** The full ref to fetch, after the one ref-name judge (domain/repositories/git-ref.ts) accepts it. */
function checkedRef(branchRef: string): string {
  const problem = refNameProblem(branchRef);
  if (problem !== null) {
    throw new SourceError(
      'invalid_ref',
      `invalid branch or ref ${JSON.stringify(branchRef)}: ${problem}`,
      {
        ref: branchRef,
      },
    );
  }
  return fullRefOf(branchRef);
}

// ---------------------------------------------------------------------------------------------
// listTree
// ---------------------------------------------------------------------------------------------

/** Every entry of the commit's tree, recursively (git ls-tree -r -l -z <sha>), paths as git stores them. */
export async function listTree(workDir: string, commitSha: string): Promise<TreeEntry[]> {
  if (!SHA_RE.test(commitSha)) {
    throw new SourceError('invalid_ref', 'commit sha must be 40 lowercase hex characters', {
      commitSha,
    });
  }
  // No network here: no transport is allowed. Started by the launcher; the listing comes back
  // whole (bounded) and is parsed here.
  const res = await runGit(['ls-tree', '-r', '-l', '-z', '--full-tree', `${commitSha}^{commit}`], {
    workDir,
    target: null,
    wholeStdoutLimit: TREE_LISTING_LIMIT,
  });
  if (res.overflow) {
    throw new SourceError(
      'source_too_large',
      `the commit's tree listing is over ${TREE_LISTING_LIMIT} bytes`,
      { commitSha },
    );
  }
  if (res.code !== 0) {
    const text = res.stderr;
    if (/not a valid object name|not a tree object|bad object/i.test(text)) {
      throw new SourceError('commit_not_found', `commit ${commitSha} is not in the repository`, {
        commitSha,
      });
    }
    throw new Error(`git ls-tree failed: ${summarize(text)}`);
  }
  // Records are NUL-terminated: "<mode> SP <type> SP <oid> SP+ <size> TAB <path>".
  const data = Buffer.from(res.stdoutBytes!);
  const entries: TreeEntry[] = [];
  let start = 0;
  for (let nul = data.indexOf(0); nul >= 0; nul = data.indexOf(0, start)) {
    entries.push(parseTreeRecord(data.subarray(start, nul)));
    start = nul + 1;
  }
  if (start !== data.length) throw new Error('git ls-tree output ended in the middle of a record');
  return entries;
}

function parseTreeRecord(record: Buffer): TreeEntry {
  const tab = record.indexOf(9);
  if (tab < 0) throw new Error('malformed git ls-tree record');
  const [mode, type, objectId, size] = record.subarray(0, tab).toString('latin1').split(/ +/);
  const entryPath = record.subarray(tab + 1).toString('utf8');
  if (!mode || !objectId || !SHA_RE.test(objectId) || size === undefined || entryPath === '') {
    throw new Error('malformed git ls-tree record');
  }
  if (type === 'commit') return { path: entryPath, mode, kind: 'submodule', objectId, size: 0 };
  if (type !== 'blob' || !/^\d+$/.test(size)) {
    throw new Error(`unexpected git ls-tree entry of type ${String(type)}`);
  }
  const kind = mode === '120000' ? 'symlink' : 'file';
  return { path: entryPath, mode, kind, objectId, size: Number(size) };
}

function waitClose(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
}

// ---------------------------------------------------------------------------------------------
// readBlobs
// ---------------------------------------------------------------------------------------------

/**
 * Streams blob contents for the given object ids via ONE `git cat-file --batch` process; calls
 * onBlob in order (and waits for it before reading on). Symlink blobs are the link target text.
 * Every id must be a blob of the repository (a file or symlink entry of listTree; submodule
 * entries have no object here). Each blob is held in memory whole: choose ids by their size.
 * No filter or textconv driver runs (plain --batch).
 */
export async function readBlobs(
  workDir: string,
  objectIds: string[],
  onBlob: (objectId: string, data: Buffer) => Promise<void>,
): Promise<void> {
  for (const id of objectIds) {
    // One id per line on stdin: an id is exactly 40 hex, so it cannot add lines or arguments.
    if (!SHA_RE.test(id)) throw new TypeError(`invalid object id ${JSON.stringify(id)}`);
  }
  if (objectIds.length === 0) return;

  const child = spawnGit(['cat-file', '--batch', '--buffer'], {
    workDir,
    target: null,
    gitDir: true,
    stdin: true,
  });
  const stderr = new TailBuffer(STDERR_LIMIT);
  child.stderr!.on('data', (c: Buffer) => stderr.push(c));
  const closed = waitClose(child);
  // git exiting early makes the write fail (EPIPE); the exit code reports it.
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(`${objectIds.join('\n')}\n`);

  let index = 0;
  try {
    let header: Buffer = Buffer.alloc(0);
    let body: Buffer | null = null; // content + the LF that ends it
    let filled = 0;
    for await (const chunk of child.stdout! as AsyncIterable<Buffer>) {
      let off = 0;
      while (off < chunk.length) {
        if (body === null) {
          const nl = chunk.indexOf(10, off);
          if (nl < 0) {
            header = Buffer.concat([header, chunk.subarray(off)]);
            if (header.length > 1024) throw new Error('malformed git cat-file output');
            break;
          }
          const line = Buffer.concat([header, chunk.subarray(off, nl)]).toString('latin1');
          header = Buffer.alloc(0);
          off = nl + 1;
          const expected = objectIds[index];
          if (expected === undefined) throw new Error('git cat-file returned too many objects');
          const m = /^([0-9a-f]{40}) (\S+) (\d+)$/.exec(line);
          if (!m || m[1] !== expected) {
            throw new Error(`object ${expected} is not in the repository (${line.slice(0, 100)})`);
          }
          if (m[2] !== 'blob') throw new Error(`object ${expected} is a ${m[2]}, not a blob`);
          body = Buffer.allocUnsafe(Number(m[3]) + 1);
          filled = 0;
        }
        if (body !== null) {
          const n = Math.min(body.length - filled, chunk.length - off);
          chunk.copy(body, filled, off, off + n);
          filled += n;
          off += n;
          if (filled === body.length) {
            if (body[body.length - 1] !== 10) throw new Error('malformed git cat-file output');
            const data = body.subarray(0, body.length - 1);
            const id = objectIds[index]!;
            body = null;
            index += 1;
            await onBlob(id, data);
          }
        }
      }
    }
    if (index !== objectIds.length || body !== null) {
      throw new Error(
        `git cat-file stopped after ${index} of ${objectIds.length} objects: ${summarize(
          redact(stderr.toString()),
        )}`,
      );
    }
  } catch (err) {
    // Never leave cat-file running (e.g. when onBlob throws).
    killGroup(child);
    await closed.catch(() => undefined);
    throw err;
  }
  const code = await closed;
  if (code !== 0) throw new Error(`git cat-file failed: ${summarize(redact(stderr.toString()))}`);
}
