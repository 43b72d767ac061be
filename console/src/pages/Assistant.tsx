/**
 * The assistant: conversations about one repository; ask a question (a durable run, followed
 * until it ends), read the answer and what it rests on. Every cited entity opens the explorer on
 * the audit of the snapshot the answer was read from, with the entity selected
 * (`…/a/<audit>/graph?entity=<key>`; a relationship `?relationship=<key>`).
 */
import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import {
  pageKeys,
  useAssistantRun,
  useConversations,
  useMessages,
  useSnapshots,
} from '../api/pages';
import { useRepositories } from '../api/queries';
import type { Viewer } from '../App';
import { Badge, Loading, Problem, When } from '../components';
import { Link, useTitle } from '../router';

type Message = Schemas['AssistantMessageResponse'];

export function Assistant({ ws, viewer }: { ws: string; viewer: Viewer }) {
  useTitle('Assistant');
  const conversations = useConversations(ws);
  const [selected, setSelected] = useState<string | null>(null);
  const current =
    conversations.data?.items.find((c) => c.id === selected) ?? conversations.data?.items[0];
  if (conversations.isError) return <Problem error={conversations.error} />;
  if (conversations.isPending) return <Loading />;
  return (
    <>
      <h1>Assistant</h1>
      <p className="muted">
        Ask about a repository&apos;s architecture. Answers come from its latest audited snapshot
        and cite the entities, relationships and evidence they rest on.
      </p>
      <div className="split">
        <nav aria-label="Conversations" className="card">
          <h2>Conversations</h2>
          {conversations.data.items.length === 0 ? (
            <p className="muted">None yet.</p>
          ) : (
            <ul className="plain">
              {conversations.data.items.map((c) => (
                <li key={c.id}>
                  <button
                    type="button"
                    className="link"
                    aria-pressed={c.id === current?.id}
                    onClick={() => setSelected(c.id)}
                  >
                    {c.title}
                  </button>
                </li>
              ))}
            </ul>
          )}
          {viewer.canWrite && <NewConversation ws={ws} onMade={setSelected} />}
        </nav>
        {current ? (
          <Conversation key={current.id} ws={ws} conversation={current} />
        ) : (
          <p className="muted">Start a conversation about a repository.</p>
        )}
      </div>
    </>
  );
}

function NewConversation({ ws, onMade }: { ws: string; onMade: (id: string) => void }) {
  const client = useQueryClient();
  const repos = useRepositories(ws);
  const [title, setTitle] = useState('');
  const [repo, setRepo] = useState('');
  const create = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/workspaces/{workspace_id}/assistant/conversations', {
          params: { path: { workspace_id: ws } },
          body: { title: title.trim(), repository_id: repo },
        }),
      ),
    onSuccess: async (made) => {
      setTitle('');
      await client.invalidateQueries({ queryKey: pageKeys.conversations(ws) });
      onMade(made.id);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="New conversation">
      <h3>New conversation</h3>
      <label htmlFor="conv-repo">Repository</label>
      <select id="conv-repo" value={repo} onChange={(e) => setRepo(e.target.value)} required>
        <option value="">Choose…</option>
        {(repos.data?.items ?? []).map((r) => (
          <option key={r.id} value={r.id}>
            {r.name}
          </option>
        ))}
      </select>
      <label htmlFor="conv-title">Title</label>
      <input
        id="conv-title"
        value={title}
        maxLength={200}
        required
        onChange={(e) => setTitle(e.target.value)}
      />
      <button type="submit" disabled={!repo || !title.trim() || create.isPending}>
        Start
      </button>
      {create.isError && <Problem error={create.error} />}
    </form>
  );
}

function Conversation({
  ws,
  conversation,
}: {
  ws: string;
  conversation: Schemas['ConversationResponse'];
}) {
  const client = useQueryClient();
  const messages = useMessages(ws, conversation.id);
  const snapshots = useSnapshots(ws, conversation.repository_id);
  const [question, setQuestion] = useState('');
  const [runId, setRunId] = useState<string | null>(null);
  const run = useAssistantRun(ws, runId);
  const ask = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST(
          '/v1/workspaces/{workspace_id}/assistant/conversations/{conversation_id}/messages',
          {
            params: { path: { workspace_id: ws, conversation_id: conversation.id } },
            body: { content: question.trim() },
          },
        ),
      ),
    onSuccess: (queued) => {
      setQuestion('');
      setRunId(queued.id);
      void client.invalidateQueries({ queryKey: pageKeys.messages(ws, conversation.id) });
    },
  });
  const ended = run.data && !['queued', 'running'].includes(run.data.status);
  useEffect(() => {
    if (ended) void client.invalidateQueries({ queryKey: pageKeys.messages(ws, conversation.id) });
  }, [ended, client, ws, conversation.id]);
  const auditOf = new Map((snapshots.data?.items ?? []).map((s) => [s.id, s.audit_id]));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    ask.mutate();
  };
  // Oldest first, as a conversation reads.
  const items = [...(messages.data?.items ?? [])].sort((a, b) =>
    a.created_at.localeCompare(b.created_at),
  );
  return (
    <section aria-labelledby="conv-title-h" className="conversation">
      <h2 id="conv-title-h">{conversation.title}</h2>
      {messages.isPending ? (
        <Loading />
      ) : messages.isError ? (
        <Problem error={messages.error} />
      ) : (
        <ol className="messages" aria-live="polite">
          {items.map((m) => (
            <MessageItem key={m.id} ws={ws} message={m} auditOf={auditOf} />
          ))}
        </ol>
      )}
      {run.data && !ended && (
        <p role="status" className="muted">
          Answering… <Badge value={run.data.status} />
        </p>
      )}
      {run.data?.error_code && (
        <p role="alert">
          The run ended <Badge value={run.data.status} /> <code>{run.data.error_code}</code>
        </p>
      )}
      <form onSubmit={submit} aria-label="Ask a question">
        <label htmlFor="question">Your question</label>
        <textarea
          id="question"
          value={question}
          maxLength={2000}
          onChange={(e) => setQuestion(e.target.value)}
        />
        <button type="submit" disabled={question.trim().length < 3 || ask.isPending}>
          Ask
        </button>
        {ask.isError && <Problem error={ask.error} />}
      </form>
    </section>
  );
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

function MessageItem({
  ws,
  message,
  auditOf,
}: {
  ws: string;
  message: Message;
  auditOf: Map<string, string>;
}) {
  const s = message.structured;
  const snapshot = typeof s.snapshot_id === 'string' ? s.snapshot_id : null;
  const audit = snapshot ? auditOf.get(snapshot) : undefined;
  const entities = strings(s.entity_keys);
  const relationships = strings(s.relationship_keys);
  const graph = (param: string, key: string) =>
    `/app/w/${ws}/a/${audit}/graph?${param}=${encodeURIComponent(key)}`;
  const cite = (param: string, keys: string[]) =>
    keys.map((k) => (
      <li key={k}>
        {audit ? (
          <Link to={graph(param, k)}>
            <code>{k}</code>
          </Link>
        ) : (
          <code>{k}</code>
        )}
      </li>
    ));
  return (
    <li className={`message message-${message.role}`} data-role={message.role}>
      <p className="muted">
        {message.role === 'user' ? 'You' : 'Assistant'} · <When at={message.created_at} />
      </p>
      <p className="message-text">{message.content}</p>
      {(entities.length > 0 || relationships.length > 0) && (
        <div className="citations">
          <h3>Cited</h3>
          <ul className="plain keys" aria-label="Cited keys">
            {cite('entity', entities)}
            {cite('relationship', relationships)}
          </ul>
        </div>
      )}
    </li>
  );
}
