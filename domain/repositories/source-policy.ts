/**
 * The repository source policy: which sources a workspace may register and an audit may fetch.
 * One set of rules, applied when a repository is registered or its URL changed (api) and again
 * right before git runs (activities/audits/source, through platform/source-access.ts, which adds
 * what needs I/O: real paths and name resolution).
 *
 * - Local paths and `file:///` URLs (any case) only for the workspaces an operator names, and
 *   never inside the service's own folders (data, blobs, scratch, code).
 * - https always; ssh only for workspaces an operator enabled with a known-hosts file.
 * - Hosts that are, or resolve to, loopback, private, link-local, unique-local, CGNAT,
 *   multicast, unspecified, reserved or metadata addresses are refused, whatever the spelling
 *   (`2130706433`, `0x7f000001`, `127.1`, `[::ffff:127.0.0.1]`), unless the operator's
 *   allow-list names the host or the address.
 * - Option-like and transport-helper forms (`-x`, `ext::`) and credentials in URLs are refused.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import path from 'node:path';

/** The stable codes of a refusal, at registration (problem `code`) and at fetch (audit error_code). */
export type SourceRefusalCode =
  /** Not a URL of an accepted form (a validation failure: the request is wrong as written). */
  | 'invalid_repository_url'
  /** A local path or file:// URL from a workspace not named in LOCAL_REPOSITORY_WORKSPACES. */
  | 'local_repository_not_allowed'
  /** A local path inside the service's own data, blob, scratch or code folders. */
  | 'repository_path_protected'
  /** An ssh URL from a workspace without REPOSITORY_SSH_WORKSPACES access. */
  | 'ssh_repository_not_allowed'
  /** A host that is, or resolves to, an internal or special-purpose address. */
  | 'repository_host_not_allowed';

export interface WorkspaceRef {
  id: string;
  slug: string;
}

/** ssh access an operator gave a workspace: host keys checked strictly against this file. */
export interface SshAccess {
  knownHostsFile: string;
  /** The private key ssh offers; null: none (no agent either). */
  identityFile: string | null;
}

export interface SourcePolicy {
  /** Workspace ids or slugs allowed local sources; `prefix*` names every slug starting so. */
  localWorkspaces: readonly string[];
  /** Workspace id or slug (or `prefix*`) -> its ssh access. */
  sshWorkspaces: Readonly<Record<string, SshAccess>>;
  /** Host names, IP addresses and CIDR ranges allowed even though internal (every workspace). */
  allowedHosts: readonly string[];
  /** Absolute folders no local source may be in (the service's data, blobs, scratch, code). */
  protectedPaths: readonly string[];
  /** Absolute folders inside protected ones that local sources may still be in (the demo repository). */
  exemptPaths: readonly string[];
}

export type ParsedSource =
  | { kind: 'local'; path: string }
  | {
      kind: 'https' | 'ssh';
      /** As git passes it to curl or ssh: lower case, IPv6 without brackets. */
      host: string;
      /** The address when the host is an IP literal (canonical form), else null. */
      literal: string | null;
      port: number;
    };

export type SourceRefusal = { ok: false; code: SourceRefusalCode; reason: string };
export type SourceCheck = { ok: true; source: ParsedSource; ssh: SshAccess | null } | SourceRefusal;

const refuse = (code: SourceRefusalCode, reason: string): SourceRefusal => ({
  ok: false,
  code,
  reason,
});
const invalid = (reason: string) => refuse('invalid_repository_url', reason);

// ---------------------------------------------------------------------------------------------
// Addresses
// ---------------------------------------------------------------------------------------------

/** Special-purpose ranges that no repository fetch may reach (with the name a message gives). */
const SPECIAL_V4: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared address space (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const SPECIAL_V6: Array<[string, number, string]> = [
  ['64:ff9b:1::', 48, 'local-use NAT64'],
  ['100::', 64, 'discard-only'],
  ['2001::', 23, 'IETF protocol assignments'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
  ['fc00::', 7, 'unique-local (cloud metadata)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

function blockList(ranges: Array<[string, number, string]>, type: 'ipv4' | 'ipv6') {
  return ranges.map(([net, prefix, name]) => {
    const list = new BlockList();
    list.addSubnet(net, prefix, type);
    return { list, name };
  });
}
const V4_RANGES = blockList(SPECIAL_V4, 'ipv4');
const V6_RANGES = blockList(SPECIAL_V6, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (any valid spelling, dotted tail included). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const b = dotted[1]!.split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  const zeros = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right];
}

const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * Why `address` (an IP address in any valid form) must not be reached, or null when it is a
 * public unicast address. IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64,
 * 6to4) are judged by that IPv4 address too.
 */
export function addressProblem(address: string): string | null {
  if (isIPv4(address)) {
    if (address === '255.255.255.255') return 'broadcast';
    return V4_RANGES.find((r) => r.list.check(address, 'ipv4'))?.name ?? null;
  }
  if (!isIPv6(address)) return 'not an IP address';
  const g = ipv6Groups(address.replace(/%.*$/, ''));
  const zeroPrefix = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (g.every((x) => x === 0)) return 'unspecified';
  if (zeroPrefix(7) && g[7] === 1) return 'loopback';
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64).
  const embedded =
    (zeroPrefix(5) && g[5] === 0xffff) ||
    zeroPrefix(6) ||
    (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0));
  if (embedded) {
    const inner = addressProblem(v4Of(g[6]!, g[7]!));
    return inner === null ? null : `${inner} (IPv4 inside IPv6)`;
  }
  if (g[0] === 0x2002) {
    const inner = addressProblem(v4Of(g[1]!, g[2]!));
    if (inner !== null) return `${inner} (inside 6to4)`;
  }
  const named = V6_RANGES.find((r) => r.list.check(address, 'ipv6'));
  if (named) return named.name;
  // Everything outside 2000::/3 is not global unicast.
  if ((g[0]! & 0xe000) !== 0x2000) return 'reserved';
  return null;
}

/**
 * The IPv4 address a host name spells in any of the forms resolvers accept (`2130706433`,
 * `0x7f000001`, `017700000001`, `127.1`), in dotted-decimal; null when the name is not numeric;
 * 'invalid' when it looks numeric but is out of range.
 */
export function looseIpv4(host: string): string | null | 'invalid' {
  const parts = host.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) value = parseInt(part, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) value = Number(part);
    else return null;
    values.push(value);
  }
  const last = values.pop()!;
  if (values.some((v) => v > 255) || last >= 256 ** (4 - values.length)) return 'invalid';
  let n = last;
  values.forEach((v, i) => (n += v * 256 ** (3 - i)));
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Names that always mean this machine, its network or a cloud metadata service. */
const SPECIAL_NAMES = new Set(['localhost', 'metadata', 'metadata.goog', 'instance-data']);
const SPECIAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.localdomain'];

function nameProblem(name: string): string | null {
  const bare = name.replace(/\.$/, '');
  if (SPECIAL_NAMES.has(bare)) return `${bare} names this machine or a metadata service`;
  const suffix = SPECIAL_SUFFIXES.find((s) => bare.endsWith(s));
  return suffix ? `names under ${suffix} are internal` : null;
}

/** Whether the allow-list names this host (by name) or this address (by IP or CIDR). */
export function allowListed(policy: SourcePolicy, host: string, address: string | null): boolean {
  for (const entry of policy.allowedHosts) {
    const e = entry.toLowerCase();
    if (!e.includes('/') && !isIPv4(e) && !isIPv6(e)) {
      if (e === host.toLowerCase()) return true;
      continue;
    }
    if (address === null) continue;
    const [net, bits] = e.split('/') as [string, string | undefined];
    const type = isIPv4(net) ? 'ipv4' : 'ipv6';
    const list = new BlockList();
    if (bits === undefined) list.addAddress(net, type);
    else list.addSubnet(net, Number(bits), type);
    if (list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6')) return true;
  }
  return false;
}

/** A problem with one allow-list entry (for the configuration), or null. */
export function allowListEntryProblem(entry: string): string | null {
  const [net, bits, extra] = entry.split('/');
  if (extra !== undefined || !net) return 'is not a host name, IP address or CIDR range';
  if (bits !== undefined) {
    const max = isIPv4(net) ? 32 : isIPv6(net) ? 128 : -1;
    if (max < 0 || !/^\d{1,3}$/.test(bits) || Number(bits) > max) return 'is not a CIDR range';
    return null;
  }
  if (isIPv4(net) || isIPv6(net)) return null;
  return /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(net)
    ? null
    : 'is not a host name, IP address or CIDR range';
}

/**
 * The rule for an address `host` resolved to (at fetch time): null when it may be reached.
 * Every address of a name must pass, so that a resolver cannot slip one in among public ones.
 */
export function resolvedAddressProblem(
  policy: SourcePolicy,
  host: string,
  address: string,
): string | null {
  if (allowListed(policy, host, address)) return null;
  const problem = addressProblem(address);
  return problem === null ? null : `${host} resolves to a ${problem} address (${address})`;
}

// ---------------------------------------------------------------------------------------------
// Workspaces and paths
// ---------------------------------------------------------------------------------------------

/** Whether an operator setting's entries (ids, slugs, `prefix*`) name this workspace. */
export function namesWorkspace(entries: Iterable<string>, workspace: WorkspaceRef): boolean {
  const id = workspace.id.toLowerCase();
  const slug = workspace.slug.toLowerCase();
  for (const raw of entries) {
    const entry = raw.toLowerCase();
    if (entry === id || entry === slug) return true;
    if (entry.length > 1 && entry.endsWith('*') && slug.startsWith(entry.slice(0, -1))) return true;
  }
  return false;
}

function sshAccessOf(policy: SourcePolicy, workspace: WorkspaceRef): SshAccess | null {
  for (const [entry, access] of Object.entries(policy.sshWorkspaces)) {
    if (namesWorkspace([entry], workspace)) return access;
  }
  return null;
}

/** Whether `child` is `parent` or inside it (both absolute and normalized). */
export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Why a local source at `realPath` must not be read, or null. Callers pass real paths (symbolic
 * links resolved) for the source and for the policy's folders when they can.
 */
export function protectedPathProblem(policy: SourcePolicy, realPath: string): string | null {
  if (policy.exemptPaths.some((e) => isInside(realPath, e))) return null;
  const folder = policy.protectedPaths.find((p) => isInside(realPath, p));
  return folder === undefined ? null : "is inside the service's own folders";
}

// ---------------------------------------------------------------------------------------------
// URLs
// ---------------------------------------------------------------------------------------------

const SCP_LIKE = /^([A-Za-z0-9_][A-Za-z0-9._-]*)@([A-Za-z0-9.][A-Za-z0-9.-]*):(?!\/\/)(?!-)[^\s]+$/;
/** `<transport>::<address>` (git's remote helpers): refused, `ext::` runs commands. */
const TRANSPORT_HELPER = /^[A-Za-z0-9][A-Za-z0-9+.-]*::/;

/**
 * The source a URL names, checked for form only (no workspace, no policy): the host in its
 * canonical spelling, the path of a local source normalized.
 */
export function parseRepositoryUrl(
  url: string,
): { ok: true; source: ParsedSource } | SourceRefusal {
  if (/[\s\x00-\x1f\x7f]/.test(url))
    return invalid('must not contain whitespace or control characters');
  if (url.startsWith('-')) return invalid('must not start with "-"');
  if (TRANSPORT_HELPER.test(url))
    return invalid('git transport helpers (`<transport>::`) are not allowed');

  if (/^file:/i.test(url) || url.startsWith('/')) {
    const local = url.startsWith('/') ? url : /^file:\/\/\//i.test(url) ? url.slice(7) : null;
    if (local === null) return invalid('file URLs must be file:///<absolute path>');
    if (local.includes('%')) return invalid('local paths must be written without %-escapes');
    const trimmed = local.length > 1 ? local.replace(/\/$/, '') : local;
    if (path.posix.normalize(trimmed) !== trimmed)
      return invalid('local paths must be written without "." or ".." segments or "//"');
    return { ok: true, source: { kind: 'local', path: trimmed } };
  }

  let kind: 'https' | 'ssh';
  let rawHost: string;
  let port: number;
  const scp = SCP_LIKE.exec(url);
  if (/^https:\/\//i.test(url) || /^ssh:\/\//i.test(url)) {
    // URL parsers disagree on `\` (a path separator here, part of the user name for others):
    // refused, so that git's parser sees the host that was checked.
    if (url.includes('\\')) return invalid('must not contain "\\"');
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return invalid('is not a valid URL');
    }
    kind = parsed.protocol === 'https:' ? 'https' : 'ssh';
    // An option-like host or user would reach ssh as a command-line flag (CVE-2017-1000117).
    if (parsed.hostname.startsWith('-') || parsed.username.startsWith('-'))
      return invalid('host and user must not start with "-"');
    if (parsed.pathname.length <= 1) return invalid('must name a repository path');
    // Credentials belong in the server's configuration, never in a URL every reader sees.
    if (parsed.password || (kind === 'https' && parsed.username))
      return invalid('must not embed credentials; configure them on the server');
    // The host as written (between `//` and the port or path), and as URL parsing reads it.
    const authority = /^[a-z]+:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(url)![1]!;
    rawHost = authority;
    port = parsed.port ? Number(parsed.port) : kind === 'https' ? 443 : 22;
    const canonical = parsed.hostname.toLowerCase();
    if (!canonical) return invalid('must name a host');
    if (canonical.startsWith('[')) {
      const literal = canonical.slice(1, -1);
      return checkedHost(kind, rawHost, literal, literal, port);
    }
    return checkedHost(kind, rawHost, canonical, null, port);
  } else if (scp) {
    kind = 'ssh';
    rawHost = scp[2]!;
    port = 22;
    return checkedHost(kind, rawHost, rawHost.toLowerCase(), null, port);
  }
  return invalid('must be an https://, ssh:// or git@host:path URL');
}

function checkedHost(
  kind: 'https' | 'ssh',
  written: string,
  host: string,
  ipv6: string | null,
  port: number,
): { ok: true; source: ParsedSource } | SourceRefusal {
  if (ipv6 !== null) {
    return { ok: true, source: { kind, host: ipv6, literal: ipv6, port } };
  }
  // ssh (a non-special URL scheme) keeps a numeric host as written; resolvers read it as IPv4.
  const v4 = looseIpv4(host);
  if (v4 === 'invalid') return invalid(`host ${written} is not a valid address`);
  if (v4 !== null) {
    if (addressProblem(v4) === null && written.toLowerCase() !== v4) {
      return invalid(`write the address ${written} as ${v4}`);
    }
    return { ok: true, source: { kind, host: v4, literal: v4, port } };
  }
  if (/[^a-z0-9.-]/.test(host) || written.toLowerCase() !== host) {
    return invalid(`host ${written} must be written in ASCII (punycode) without escapes`);
  }
  return { ok: true, source: { kind, host, literal: null, port } };
}

/**
 * The policy's verdict on `url` for `workspace`, without I/O: the form, the kind of source the
 * workspace may use, the host's name or literal address, a local path's folder (as written).
 */
export function checkSource(
  url: string,
  workspace: WorkspaceRef,
  policy: SourcePolicy,
): SourceCheck {
  const parsed = parseRepositoryUrl(url);
  if (!parsed.ok) return parsed;
  const source = parsed.source;
  if (source.kind === 'local') {
    if (!namesWorkspace(policy.localWorkspaces, workspace)) {
      return refuse(
        'local_repository_not_allowed',
        'local paths and file:// URLs are not allowed for this workspace (an operator names the workspaces that may use them in LOCAL_REPOSITORY_WORKSPACES)',
      );
    }
    const problem = protectedPathProblem(policy, source.path);
    if (problem) return refuse('repository_path_protected', `${source.path} ${problem}`);
    return { ok: true, source, ssh: null };
  }
  let ssh: SshAccess | null = null;
  if (source.kind === 'ssh') {
    ssh = sshAccessOf(policy, workspace);
    if (ssh === null) {
      return refuse(
        'ssh_repository_not_allowed',
        'ssh repositories are not enabled for this workspace (an operator enables them in REPOSITORY_SSH_WORKSPACES); use https',
      );
    }
  }
  if (!allowListed(policy, source.host, source.literal)) {
    const problem =
      source.literal !== null ? addressProblem(source.literal) : nameProblem(source.host);
    if (problem !== null) {
      return refuse(
        'repository_host_not_allowed',
        `host ${source.host} is not allowed: ${source.literal !== null ? `a ${problem} address` : problem}`,
      );
    }
  }
  if (/\.$/.test(source.host)) return invalid('write the host without a trailing dot');
  return { ok: true, source, ssh };
}
