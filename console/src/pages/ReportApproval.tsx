/**
 * An audit report's approval: draft (built from the current rows) until a member holding
 * reports:approve, other than the one who started the audit, signs it off; then the approved
 * content is served unchanged. The approval names the content hash the approver read.
 */
import { useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { pageKeys, useMemberNames, useReport } from '../api/pages';
import type { Viewer } from '../App';
import { ApprovalControls } from '../approval';
import { Badge, Problem, When } from '../components';

export function ReportApproval({
  ws,
  audit,
  viewer,
}: {
  ws: string;
  audit: string;
  viewer: Viewer;
}) {
  const client = useQueryClient();
  const report = useReport(ws, audit, viewer.scopes.has('reports:read') || !viewer.canWrite);
  const names = useMemberNames(ws, viewer.canWrite);
  if (report.isError) return <Problem error={report.error} />;
  if (!report.data) return null;
  const r = report.data;
  const approval = r.approval;
  return (
    <section aria-labelledby="report" data-report-status={r.status}>
      <h2 id="report">Report</h2>
      <p>
        <Badge value={r.status} /> version <code>{r.report_version}</code> · SHA-256{' '}
        <code className="hash-value">{r.content_sha256}</code>
      </p>
      {approval ? (
        <p>
          Approved by {names.data?.get(approval.actor_id) ?? approval.actor_id.slice(0, 8)} (
          {approval.actor_role}) · <When at={approval.created_at} /> — {approval.rationale}
        </p>
      ) : (
        viewer.canWrite &&
        viewer.scopes.has('reports:approve') && (
          <ApprovalControls
            id="report"
            isAuthor={false}
            authorNote=""
            allowReject={false}
            onDecide={async (_outcome, rationale) =>
              unwrap(
                await api.POST('/v1/workspaces/{workspace_id}/audits/{audit_id}/report/approval', {
                  params: { path: { workspace_id: ws, audit_id: audit } },
                  body: { rationale, content_sha256: r.content_sha256 },
                }),
              )
            }
            onDone={() => void client.invalidateQueries({ queryKey: pageKeys.report(ws, audit) })}
          />
        )
      )}
    </section>
  );
}
