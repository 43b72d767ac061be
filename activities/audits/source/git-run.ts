/**
 * Running git on a tenant's repository: the fixed environment and `-c` settings of every
 * invocation, the bounded runner, and the messages made from git's output (credentials redacted).
 * The safety measures are listed in git.ts's header and next to the code that applies them here.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { SourceTarget } from '../../../platform/source-access';
import { runCommand, spawnDetached, type RunResult } from './process-launcher';

/**
 * Test seam: extra `-c name=value` settings appended to every git invocation. Never set outside
 * tests (the tests use it to force protocol v0, whose servers refuse unadvertised commits).
 */
export const gitTestOverrides: { extraConfig: string[] } = { extraConfig: [] };

export const SHA_RE = /^[0-9a-f]{40}$/;
/** How much of git's stderr is kept (the tail) for error messages. */
export const STDERR_LIMIT = 4096;
/** Bound on stdout of the small commands whose output is read as a whole (rev-parse...). */
const STDOUT_LIMIT = 64 * 1024;

/** The bare repository inside the caller's workDir. */
export function gitDirOf(workDir: string): string {
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

export function spawnGit(
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

/** What a git command gave: the launcher's result, stderr's credentials redacted. */
export type GitResult = RunResult;

export interface RunOptions {
  workDir: string;
  /** Where the fetch goes (null: a command that uses no transport). */
  target: SourceTarget | null;
  /** Run against <workDir>/repo.git (every command but `init`). */
  gitDir?: boolean;
  /** Absolute deadline (epoch ms); the process group is killed when it passes. */
  deadline?: number;
  /** Keep all of stdout as bytes, up to this many (see RunRequest.wholeStdoutLimit). */
  wholeStdoutLimit?: number;
  /** Written to git's stdin (see RunRequest.stdin). */
  stdin?: string;
}

/**
 * Runs one git command to completion, capturing bounded output. Started by the process launcher
 * (process-launcher.ts): a fork of this large process costs its main thread milliseconds.
 */
export async function runGit(args: string[], opts: RunOptions): Promise<GitResult> {
  const gitDir = opts.gitDir ?? true;
  const result = await runCommand({
    command: 'git',
    argv: gitArgv(args, { target: opts.target, gitDir, workDir: opts.workDir }),
    cwd: opts.workDir,
    env: gitEnv(opts.workDir, opts.target),
    ...(opts.deadline !== undefined ? { deadline: opts.deadline } : {}),
    ...(opts.wholeStdoutLimit !== undefined ? { wholeStdoutLimit: opts.wholeStdoutLimit } : {}),
    ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
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
export function summarize(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  // git repeats lines (a remote's errors come once per attempt) and says the cause last, in its
  // `fatal:` line: each line once, the fatal ones first, so a bounded message keeps the cause.
  const fatal = (l: string) => /^(remote: )?fatal:/i.test(l);
  const important = [...new Set(lines.filter((l) => /^(fatal|error|remote|ERROR):/i.test(l)))].sort(
    (a, b) => Number(fatal(b)) - Number(fatal(a)),
  );
  const text = (important.length > 0 ? important : lines.slice(-3)).join(' / ');
  return text.length > 500 ? `${text.slice(0, 497)}...` : text || 'git failed without a message';
}
