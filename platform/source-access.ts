/**
 * The repository source policy (domain/repositories/source-policy.ts) with the checks that need
 * I/O: the real path of a local source (symbolic links resolved, so that a link cannot lead into
 * the service's folders) and, at fetch time, the addresses a host name resolves to. The address
 * checked is the address git is then pinned to, so a second resolution (DNS rebinding) cannot
 * send the connection elsewhere.
 */
import dns from 'node:dns';
import fs from 'node:fs';
import path from 'node:path';
import {
  checkSource,
  protectedPathProblem,
  resolvedAddressProblem,
  type SourcePolicy,
  type SourceRefusal,
  type SshAccess,
  type WorkspaceRef,
} from '../domain/repositories/source-policy';
import type { Config } from './config';
import { CODE_DIR } from './code-dir';

/** Where a fetch may go, as checked: the only values git is given. */
export type SourceTarget =
  | { kind: 'local'; path: string }
  | {
      kind: 'https' | 'ssh';
      host: string;
      port: number;
      /** The checked address git connects to. */
      address: string;
      ssh: SshAccess | null;
    };

export type Lookup = (host: string) => Promise<string[]>;

const systemLookup: Lookup = async (host) =>
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The checkout's repository when it lives elsewhere (a worktree's `.git` file names it): its
 * objects are the code too.
 */
function codeRepositoryDirs(): string[] {
  try {
    const gitFile = fs.readFileSync(path.join(CODE_DIR, '.git'), 'utf8');
    const gitDir = path.resolve(CODE_DIR, /^gitdir: (.+)$/m.exec(gitFile)?.[1]?.trim() ?? '.git');
    const common = fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim();
    return [gitDir, path.resolve(gitDir, common)];
  } catch {
    // A plain checkout (`.git` is a folder inside CODE_DIR) or none.
    return [];
  }
}
const CODE_REPOSITORY_DIRS = codeRepositoryDirs();

/** The policy the operator's settings make. */
export function sourcePolicyOf(config: Config): SourcePolicy {
  return {
    localWorkspaces: config.localRepositoryWorkspaces,
    sshWorkspaces: config.repositorySshWorkspaces,
    allowedHosts: config.repositoryAllowedHosts,
    protectedPaths: [
      config.dataDir,
      config.blobDir,
      config.workDir,
      CODE_DIR,
      ...CODE_REPOSITORY_DIRS,
    ],
    // npm start's demo repository: generated, public content, audited by the demo workspace.
    exemptPaths: [path.join(config.dataDir, 'demo-repo')],
  };
}

/** Real path of `p`, or `p` itself when it does not exist (yet). */
async function realOrSelf(p: string): Promise<string> {
  return fs.promises.realpath(p).catch(() => p);
}

/** The policy's folders with symbolic links resolved, as the source's path is. */
async function realPolicy(policy: SourcePolicy): Promise<SourcePolicy> {
  return {
    ...policy,
    protectedPaths: await Promise.all(policy.protectedPaths.map(realOrSelf)),
    exemptPaths: await Promise.all(policy.exemptPaths.map(realOrSelf)),
  };
}

async function checkedLocalPath(
  policy: SourcePolicy,
  written: string,
): Promise<{ ok: true; path: string } | SourceRefusal> {
  const real = await realOrSelf(written);
  const problem = protectedPathProblem(await realPolicy(policy), real);
  if (problem !== null) {
    return { ok: false, code: 'repository_path_protected', reason: `${written} ${problem}` };
  }
  return { ok: true, path: real };
}

/**
 * At registration: the policy's rules, and a local path's real location. No name is resolved
 * here (the answer may differ by the time an audit runs; the fetch decides).
 */
export async function checkRegistration(
  url: string,
  workspace: WorkspaceRef,
  policy: SourcePolicy,
): Promise<{ ok: true } | SourceRefusal> {
  const check = checkSource(url, workspace, policy);
  if (!check.ok) return check;
  if (check.source.kind === 'local') {
    const local = await checkedLocalPath(policy, check.source.path);
    if (!local.ok) return local;
  }
  return { ok: true };
}

/**
 * At fetch time: the policy's rules, then the real path of a local source or every address the
 * host resolves to (all must be allowed); the result names the one address to connect to.
 * A name that does not resolve is `unresolved` (the caller reports the source unreachable).
 */
export async function resolveSource(
  url: string,
  workspace: WorkspaceRef,
  policy: SourcePolicy,
  lookup: Lookup = systemLookup,
): Promise<{ ok: true; target: SourceTarget } | SourceRefusal | { ok: false; code: 'unresolved' }> {
  const check = checkSource(url, workspace, policy);
  if (!check.ok) return check;
  const source = check.source;
  if (source.kind === 'local') {
    const local = await checkedLocalPath(policy, source.path);
    return local.ok ? { ok: true, target: { kind: 'local', path: local.path } } : local;
  }
  let addresses: string[];
  if (source.literal !== null) addresses = [source.literal];
  else {
    try {
      addresses = await lookup(source.host);
    } catch {
      return { ok: false, code: 'unresolved' };
    }
    if (addresses.length === 0) return { ok: false, code: 'unresolved' };
  }
  for (const address of addresses) {
    const problem = resolvedAddressProblem(policy, source.host, address);
    if (problem !== null) {
      return { ok: false, code: 'repository_host_not_allowed', reason: problem };
    }
  }
  return {
    ok: true,
    target: {
      kind: source.kind,
      host: source.host,
      port: source.port,
      address: addresses[0]!,
      ssh: check.ssh,
    },
  };
}
