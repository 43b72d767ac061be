/**
 * Requesting a workflow action: each kind the contract offers with the target fields it takes
 * (a repository, an audit, a member, a branch, a gate policy), and the reason the approver reads.
 * The API's problems show under the field they name.
 */
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { pageKeys } from '../api/pages';
import { useAudits, useRepositories } from '../api/queries';
import { Field, FormCard, TextField } from '../components';

type Create = Schemas['WorkflowActionCreate'];
type Kind = Create['kind'];
type TargetField = 'repository_id' | 'audit_id' | 'member_id' | 'branch_ref' | 'gate_policy';

/** Every kind of the contract (the compiler holds this list to it) and the target it takes. */
const KINDS: Record<Kind, { label: string; target: TargetField[] }> = {
  delete_repository: { label: 'Delete a repository with its history', target: ['repository_id'] },
  purge_attachments: { label: 'Purge the attachments of an audit', target: ['audit_id'] },
  deep_review_audit: {
    label: 'Audit a repository with a deep review',
    target: ['repository_id', 'branch_ref'],
  },
  change_gate_policy: { label: 'Change the gate policy', target: ['gate_policy'] },
  revoke_member_tokens: { label: 'Revoke every live token of a member', target: ['member_id'] },
};

function useGatePolicy(ws: string, enabled: boolean) {
  return useQuery({
    queryKey: ['ws', ws, 'gate-policy'],
    enabled,
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/policies/gate', {
          params: { path: { workspace_id: ws } },
        }),
      ),
  });
}

function useMembers(ws: string, enabled: boolean) {
  return useQuery({
    queryKey: ['ws', ws, 'members', 'page'],
    enabled,
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/members', {
          params: { path: { workspace_id: ws }, query: { limit: 100 } },
        }),
      ),
  });
}

/** The form: a kind, its target fields, a reason. */
export function RequestAction({ ws }: { ws: string }) {
  const client = useQueryClient();
  const [kind, setKind] = useState<Kind>('deep_review_audit');
  const [repository, setRepository] = useState('');
  const [audit, setAudit] = useState('');
  const [member, setMember] = useState('');
  const [branch, setBranch] = useState('');
  const [gateEnabled, setGateEnabled] = useState(true);
  const [floor, setFloor] = useState('');
  const [reason, setReason] = useState('');
  const fields = new Set(KINDS[kind].target);
  const repos = useRepositories(ws);
  const audits = useAudits(ws);
  const members = useMembers(ws, fields.has('member_id'));
  const gate = useGatePolicy(ws, fields.has('gate_policy'));
  const repoNames = new Map((repos.data?.items ?? []).map((r) => [r.id, r.name]));
  const request = useMutation({
    mutationFn: async () => {
      const target: Create['target'] = {};
      if (fields.has('repository_id')) target.repository_id = repository;
      if (fields.has('audit_id')) target.audit_id = audit;
      if (fields.has('member_id')) target.member_id = member;
      if (fields.has('branch_ref') && branch.trim()) target.branch_ref = branch.trim();
      if (fields.has('gate_policy'))
        target.gate_policy = {
          enabled: gateEnabled,
          confidence_floor: floor === '' ? (gate.data?.confidence_floor ?? 0) : Number(floor),
          rules: gate.data?.rules ?? [],
        };
      return unwrap(
        await api.POST('/v1/workspaces/{workspace_id}/workflow-actions', {
          params: { path: { workspace_id: ws } },
          body: { kind, target, reason: reason.trim() },
        }),
      );
    },
    onSuccess: () => {
      setReason('');
      void client.invalidateQueries({ queryKey: pageKeys.actions(ws) });
    },
  });
  const err = request.error;
  const pick = (
    id: string,
    label: string,
    path: string,
    value: string,
    set: (v: string) => void,
    options: Array<{ value: string; label: string }>,
  ) => (
    <Field id={id} label={label} error={err} path={path}>
      {(c) => (
        <select {...c} value={value} onChange={(e) => set(e.target.value)}>
          <option value="">choose…</option>
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
  return (
    <FormCard
      title="Request an action"
      submit="Request the action"
      action={request}
      done={request.isSuccess ? `Requested: ${KINDS[request.data.kind].label}.` : null}
    >
      <Field id="wa-kind" label="Action" error={err} path="/kind" wide>
        {(c) => (
          <select {...c} value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
            {Object.entries(KINDS).map(([k, v]) => (
              <option key={k} value={k}>
                {v.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {fields.has('repository_id') &&
        pick(
          'wa-repository',
          'Repository',
          '/target/repository_id',
          repository,
          setRepository,
          (repos.data?.items ?? []).map((r) => ({ value: r.id, label: r.name })),
        )}
      {fields.has('audit_id') &&
        pick(
          'wa-audit',
          'Audit',
          '/target/audit_id',
          audit,
          setAudit,
          (audits.data?.items ?? []).map((a) => ({
            value: a.id,
            label: `${repoNames.get(a.repository_id ?? '') ?? 'upload'} · ${a.status} · ${new Date(a.created_at).toLocaleString()}`,
          })),
        )}
      {fields.has('member_id') &&
        pick(
          'wa-member',
          'Member',
          '/target/member_id',
          member,
          setMember,
          (members.data?.items ?? []).map((m) => ({
            value: m.id,
            label: `${m.login} (${m.role})`,
          })),
        )}
      {fields.has('branch_ref') && (
        <TextField
          id="wa-branch"
          label="Branch (default: the default branch)"
          error={err}
          path="/target/branch_ref"
          value={branch}
          onChange={setBranch}
        />
      )}
      {fields.has('gate_policy') && (
        <>
          <Field id="wa-gate" label="Gate enabled" error={err} path="/target/gate_policy/enabled">
            {(c) => (
              <input
                {...c}
                type="checkbox"
                checked={gateEnabled}
                onChange={(e) => setGateEnabled(e.target.checked)}
              />
            )}
          </Field>
          <TextField
            id="wa-floor"
            label={`Confidence floor, 0 to 1 (now ${gate.data?.confidence_floor ?? '…'})`}
            error={err}
            path="/target/gate_policy/confidence_floor"
            value={floor}
            onChange={setFloor}
          />
        </>
      )}
      <Field id="wa-reason" label="Reason (shown to the approver)" error={err} path="/reason" wide>
        {(c) => (
          <textarea
            {...c}
            value={reason}
            maxLength={2000}
            onChange={(e) => setReason(e.target.value)}
          />
        )}
      </Field>
    </FormCard>
  );
}
