/** API tokens: create one with a scope picker that explains each scope (the secret shown once); revoke. */
import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { keys, useScopes, useTokens } from '../api/queries';
import type { Viewer } from '../App';
import { Loading, Problem, When, Table } from '../components';
import { useTitle } from '../router';

type Scope = Schemas['ApiTokenCreate']['scopes'][number];

export function Tokens({ ws, viewer }: { ws: string; viewer: Viewer }) {
  useTitle('API tokens');
  const client = useQueryClient();
  const tokens = useTokens(ws);
  const scopes = useScopes();
  const [name, setName] = useState('');
  const [days, setDays] = useState(30);
  const [picked, setPicked] = useState<Set<Scope>>(new Set());
  const [secret, setSecret] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/workspaces/{workspace_id}/tokens', {
          params: { path: { workspace_id: ws } },
          body: {
            name,
            scopes: [...picked],
            expires_at: new Date(Date.now() + days * 86_400_000).toISOString(),
          },
        }),
      ),
    onSuccess: (made) => {
      setSecret(made.token);
      setName('');
      setPicked(new Set());
      void client.invalidateQueries({ queryKey: keys.tokens(ws) });
    },
  });
  const revoke = useMutation({
    mutationFn: async (id: string) =>
      unwrap(
        await api.DELETE('/v1/workspaces/{workspace_id}/tokens/{token_id}', {
          params: { path: { workspace_id: ws, token_id: id } },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.tokens(ws) }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSecret(null);
    create.mutate();
  };
  const toggle = (s: Scope) => {
    const next = new Set(picked);
    if (next.has(s)) next.delete(s);
    else next.add(s);
    setPicked(next);
  };
  return (
    <>
      <h1>API tokens</h1>
      {secret && (
        <div className="secret" role="status">
          <p>
            <strong>Copy this token now: it is shown only once.</strong>
          </p>
          <code className="token-secret">{secret}</code>
          <button type="button" className="secondary" onClick={() => setSecret(null)}>
            I have copied it
          </button>
        </div>
      )}
      {viewer.canWrite && (
        <form onSubmit={submit} aria-label="Create a token">
          <h2>Create a token</h2>
          <label htmlFor="t-name">Name</label>
          <input
            id="t-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={255}
          />
          <label htmlFor="t-days">Expires in (days, at most 366)</label>
          <input
            id="t-days"
            type="number"
            min={1}
            max={366}
            value={days}
            onChange={(e) => setDays(Number(e.target.value))}
          />
          <fieldset>
            <legend>Scopes</legend>
            {(scopes.data?.items ?? []).map((s) => (
              <div key={s.name} className="scope">
                <input
                  type="checkbox"
                  id={`s-${s.name}`}
                  checked={picked.has(s.name as Scope)}
                  disabled={!viewer.scopes.has(s.name)}
                  onChange={() => toggle(s.name as Scope)}
                />
                <label htmlFor={`s-${s.name}`}>
                  <code>{s.name}</code> <span className="muted">{s.description}</span>
                </label>
              </div>
            ))}
          </fieldset>
          <button type="submit" disabled={picked.size === 0 || create.isPending}>
            Create token
          </button>
          {create.isError && <Problem error={create.error} />}
        </form>
      )}
      <h2>Tokens</h2>
      {tokens.isPending ? (
        <Loading />
      ) : tokens.isError ? (
        <Problem error={tokens.error} />
      ) : (
        <Table label="Tokens table" columns={['Name', 'Prefix', 'Scopes', 'Expires', 'State']}>
          {tokens.data.items.map((t) => (
            <tr key={t.id}>
              <th scope="row">{t.name}</th>
              <td>
                <code>{t.prefix}</code>
              </td>
              <td>{t.scopes.join(', ')}</td>
              <td>
                <When at={t.expires_at} />
              </td>
              <td>
                {t.revoked_at ? (
                  'revoked'
                ) : viewer.canWrite ? (
                  <button type="button" className="secondary" onClick={() => revoke.mutate(t.id)}>
                    Revoke <span className="sr-only">{t.name}</span>
                  </button>
                ) : (
                  'active'
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </>
  );
}
