/**
 * Stage `source`: fetches the exact commit (or unpacks the upload), stores its files by content
 * and writes the manifest, only while its attempt is the current one.
 */
import { Context } from '@temporalio/activity';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { getAuditById, replaceSourceFiles, updateAudit, type SourceFileRow } from '../../db/audits';
import { findRepository } from '../../db/repositories';
import { findUpload } from '../../db/uploads';
import { findWorkspace } from '../../db/workspaces';
import { classifyPath, headBytes } from '../../domain/audits/classify';
import { SourceError } from '../../domain/audits/source-error';
import { isOtherBranch } from '../../domain/repositories/git-ref';
import { pullRequestBaseOf } from '../../db/integrations';
import { scopeFilter } from '../../domain/audits/source-scope';
import { filesBudgetGap } from '../../domain/audits/budgets';
import { DEFAULT_ARCHIVE_LIMITS, readArchive } from '../../platform/archive';
import { sourcePolicyOf } from '../../platform/source-access';
import { attemptFolder, attemptGuard } from './attempts';
import { fetchCommit } from './source/git';
import { listTree, readBlobs } from './source/git-read';
import type { AuditPlan, StageOutcome, StepMarks } from './types';
import { fail, requestedTypes, withHeartbeat, type AuditActivityDeps, type Steps } from './steps';

export function createAcquireSource(deps: AuditActivityDeps, steps: Steps) {
  const { db, blobs, config } = deps;
  const { log, begin, applyMarks, outageAware, step } = steps;
  return async function acquireSource(
    auditId: string,
    marks?: StepMarks,
  ): Promise<StageOutcome & { plan?: AuditPlan }> {
    let plan: AuditPlan | undefined;
    // A stale attempt (paused past its heartbeat timeout, then resumed) stops before writing.
    const guard = attemptGuard(db, deps.log, {
      auditId,
      stage: 'source',
      attempt: Context.current().info.attempt,
      heartbeatTimeoutSeconds:
        (Context.current().info.heartbeatTimeoutMs ?? config.agentHeartbeatTimeoutSeconds * 1000) /
        1000,
    });
    await outageAware(() => guard.claim());
    if (marks?.beginAudit) {
      plan = await outageAware(async () => {
        const planned = await begin(auditId);
        const skipped = planned.stages.filter((s) => s.skip !== null);
        await applyMarks(
          auditId,
          skipped.map((s) => ({ key: s.key, status: 'skipped', summary: s.skip! })),
          null,
        );
        return planned;
      });
    }
    const outcome = await step(auditId, marks, async () => {
      const audit = await getAuditById(db, auditId);
      const scope = scopeFilter(
        audit.source_scope as { include?: string[]; exclude?: string[]; max_files?: number },
      );
      const rows: SourceFileRow[] = [];
      let truncated = 0;
      let overBudget = 0;
      // Paths accepted so far: a git tree is filtered before any row is read, so the bounds
      // count acceptances, not rows.
      let accepted = 0;
      const accept = (p: string) => {
        if (!scope.accepts(p)) return false;
        if (scope.maxFiles !== null && accepted >= scope.maxFiles) {
          truncated += 1;
          return false;
        }
        if (accepted >= config.auditBudgets.maxFiles) {
          overBudget += 1;
          return false;
        }
        accepted += 1;
        return true;
      };
      const addFile = async (p: string, data: Buffer | null, size: number) => {
        const stored = data !== null && size <= config.maxStoredFileBytes;
        const sha256 = data
          ? await (stored
              ? blobs.put(data)
              : Promise.resolve(crypto.createHash('sha256').update(data).digest('hex')))
          : null;
        const head =
          data && headBytes(p) ? data.subarray(0, headBytes(p)).toString('utf8') : undefined;
        rows.push({
          audit_id: auditId,
          path: p,
          kind: 'file',
          size,
          sha256,
          link_target: null,
          source_type: classifyPath(p, head),
          stored,
        });
      };

      let source: Record<string, unknown>;
      try {
        if (audit.audit_type === 'repository') {
          const repo = await findRepository(db, audit.workspace_id, audit.repository_id!);
          if (!repo)
            fail(
              'repository_not_found',
              `Repository ${audit.repository_id} no longer exists.`,
              false,
            );
          const workspace = await findWorkspace(db, audit.workspace_id);
          const folder = await attemptFolder(
            config.workDir,
            auditId,
            Context.current().info.attempt,
          );
          const workDir = folder.dir;
          try {
            const branchRef = audit.commit_sha
              ? audit.branch_ref
              : (audit.branch_ref ?? repo.default_branch);
            // Another branch than the default is gated against the default branch at the
            // merge-base (docs/decisions.md, pull requests gated end to end); a pull request's
            // head against the branch it merges into. A baseline audit needs no baseline itself.
            const target = audit.origin === 'webhook' ? await pullRequestBaseOf(db, auditId) : null;
            const baseRef =
              audit.origin === 'baseline'
                ? null
                : target && isOtherBranch(branchRef, target)
                  ? target
                  : isOtherBranch(branchRef, repo.default_branch)
                    ? repo.default_branch
                    : null;
            const fetched = await withHeartbeat(() =>
              fetchCommit({
                baseRef,
                url: repo.url,
                branchRef,
                commitSha: audit.commit_sha,
                workDir,
                workspace: { id: audit.workspace_id, slug: workspace?.slug ?? '' },
                policy: sourcePolicyOf(config),
                timeoutMs: config.gitTimeoutMs,
              }),
            );
            await guard.check();
            await log(auditId, {
              level: 'info',
              source: 'stage',
              message: `fetched ${fetched.ref ?? 'commit'} at ${fetched.commitSha}`,
              details: { url: repo.url, commit_sha: fetched.commitSha, ref: fetched.ref },
            });
            const tree = await listTree(workDir, fetched.commitSha);
            const wanted = tree.filter((e) => e.kind !== 'submodule' && accept(e.path));
            const byId = new Map<string, typeof wanted>();
            for (const e of wanted) {
              const same = byId.get(e.objectId);
              if (same) same.push(e);
              else byId.set(e.objectId, [e]);
            }
            let totalBytes = 0;
            for (const [, entries] of byId) totalBytes += entries[0]!.size;
            await withHeartbeat(() =>
              readBlobs(
                workDir,
                [...byId.keys()],
                async (objectId, data) => {
                  for (const e of byId.get(objectId) ?? []) {
                    if (e.kind === 'symlink') {
                      rows.push({
                        audit_id: auditId,
                        path: e.path,
                        kind: 'symlink',
                        size: 0,
                        sha256: null,
                        link_target: data.toString('utf8'),
                        source_type: null,
                        stored: false,
                      });
                    } else {
                      await addFile(e.path, data, e.size);
                    }
                  }
                },
                totalBytes,
              ),
            );
            await guard.check();
            await updateAudit(db, auditId, {
              commit_sha: fetched.commitSha,
              branch_ref: branchRef ?? fetched.ref,
            });
            source = {
              kind: 'repository',
              repository_id: repo.id,
              upload_id: null,
              url: repo.url,
              branch_ref: branchRef ?? fetched.ref,
              commit_sha: fetched.commitSha,
              ...(baseRef
                ? { base: { ref: baseRef, merge_base_sha: fetched.mergeBase ?? null } }
                : {}),
            };
          } catch (err) {
            // git failing because its folder vanished under it says nothing about the source:
            // retried, never a final `commit_not_found`.
            if (err instanceof SourceError && !fs.existsSync(workDir))
              fail('work_dir_lost', `The scratch folder vanished: ${err.message}`, true);
            throw err;
          } finally {
            await folder.remove();
          }
        } else {
          const upload = await findUpload(db, audit.workspace_id, audit.upload_id!);
          if (!upload) fail('upload_not_found', `Upload ${audit.upload_id} does not exist.`, false);
          await withHeartbeat(() =>
            readArchive(
              blobs.pathOf(upload.sha256),
              upload.format,
              DEFAULT_ARCHIVE_LIMITS,
              async (entry) => {
                if (!accept(entry.path)) return;
                if (entry.kind === 'symlink') {
                  rows.push({
                    audit_id: auditId,
                    path: entry.path,
                    kind: 'symlink',
                    size: 0,
                    sha256: null,
                    link_target: entry.target,
                    source_type: null,
                    stored: false,
                  });
                } else {
                  await addFile(entry.path, entry.data, entry.size);
                }
              },
            ),
          );
          source = {
            kind: 'upload',
            repository_id: null,
            upload_id: upload.id,
            url: null,
            branch_ref: null,
            commit_sha: null,
          };
        }
      } catch (err) {
        if (err instanceof SourceError) {
          await guard.check();
          await log(auditId, {
            level: 'error',
            source: 'stage',
            message: err.message,
            details: { error_code: err.code, ...err.details },
          });
          fail(err.code, err.message, false);
        }
        throw err;
      }

      rows.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      const manifestText = rows
        .map((r) => `${r.path}\t${r.kind}\t${r.size}\t${r.sha256 ?? r.link_target ?? ''}`)
        .join('\n');
      const manifestSha256 = crypto.createHash('sha256').update(manifestText).digest('hex');
      const bytes = rows.reduce((n, r) => n + r.size, 0);
      const bySourceType: Record<string, number> = {};
      for (const r of rows)
        bySourceType[r.source_type ?? 'other'] = (bySourceType[r.source_type ?? 'other'] ?? 0) + 1;

      // Written whole, and only while this attempt is the current one (a stale attempt that
      // resumed after a later one began must not replace its manifest).
      await guard.whileCurrent(async (trx) => {
        await replaceSourceFiles(trx, auditId, rows);
        const fresh = await getAuditById(trx, auditId);
        const gaps = [
          // The gaps this step writes are written afresh (a retried attempt must not repeat them).
          ...fresh.coverage_gaps.filter(
            (g) =>
              !['source_type', 'truncated', 'large_files', 'budget'].includes(g.kind as string),
          ),
        ];
        for (const type of requestedTypes(fresh)) {
          if (!bySourceType[type])
            gaps.push({
              kind: 'source_type',
              source_type: type,
              reason: 'no_files',
              message: `no ${type} files found in the source`,
            });
        }
        if (truncated > 0)
          gaps.push({
            kind: 'truncated',
            reason: 'max_files',
            message: `${truncated} files beyond source_scope.max_files were not read`,
          });
        if (overBudget > 0) gaps.push(filesBudgetGap(config.auditBudgets.maxFiles, overBudget));
        const unstored = rows.filter((r) => r.kind === 'file' && !r.stored).length;
        if (unstored > 0)
          gaps.push({
            kind: 'large_files',
            reason: 'size_limit',
            message: `${unstored} files over ${config.maxStoredFileBytes} bytes were listed but not read`,
          });

        const contextHash = crypto
          .createHash('sha256')
          .update(
            JSON.stringify([
              manifestSha256,
              fresh.source_scope,
              fresh.deep_review,
              // What was read, not only what was listed.
              { max_stored_file_bytes: config.maxStoredFileBytes, unread: unstored },
            ]),
          )
          .digest('hex');
        await updateAudit(trx, auditId, {
          source: {
            ...source,
            file_count: rows.length,
            byte_count: bytes,
            manifest_sha256: manifestSha256,
          },
          source_manifest: {
            sha256: manifestSha256,
            file_count: rows.length,
            byte_count: bytes,
            by_source_type: bySourceType,
            truncated_files: truncated,
          },
          coverage_gaps: gaps,
          context_hash: contextHash,
        });
      });
      const base = (source as { base?: { merge_base_sha: string | null } }).base;
      return {
        summary: `${rows.length} files, ${bytes} bytes, manifest ${manifestSha256.slice(0, 12)}`,
        ...(base?.merge_base_sha ? { baseline: true } : {}),
      };
    });
    return plan ? { ...outcome, plan } : outcome;
  };
}
