/**
 * Fetches one commit of a tenant's repository with the git CLI; git-read.ts reads its tree and
 * blobs, git-run.ts runs every git command (environment, settings, bounded output, messages).
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
import type { SourcePolicy, WorkspaceRef } from '../../../domain/repositories/source-policy';
import { resolveSource, type Lookup } from '../../../platform/source-access';
import { fullRefOf, refNameProblem } from '../../../domain/repositories/git-ref';
import { SourceError } from '../../../domain/audits/source-error';
import {
  gitDirOf,
  redact,
  runGit,
  SHA_RE,
  summarize,
  type GitResult,
  type RunOptions,
} from './git-run';

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

/** The fetched commit is kept under this local ref (never a name chosen by the tenant). */
const FETCHED_REF = 'refs/archaudit/fetched';
/** The base branch's tip, when a merge-base is asked for. */
const BASE_REF = 'refs/archaudit/base';

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
