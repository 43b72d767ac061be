/**
 * Approve or reject with a rationale: the one approval model (decisions, remediations, workflow
 * actions, reports) as a control. The author never sees Approve (the API refuses it with
 * `self_approval`); they may reject (withdraw). Refusals are shown as the API's problems.
 */
import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Problem } from './components';

export function ApprovalControls({
  id,
  isAuthor,
  authorNote,
  onDecide,
  onDone,
  allowReject = true,
}: {
  /** A prefix for the control ids (unique on the page). */
  id: string;
  isAuthor: boolean;
  authorNote: string;
  onDecide: (outcome: 'approved' | 'rejected', rationale: string) => Promise<unknown>;
  onDone: () => void;
  allowReject?: boolean;
}) {
  const [rationale, setRationale] = useState('');
  const decide = useMutation({
    mutationFn: (outcome: 'approved' | 'rejected') => onDecide(outcome, rationale.trim()),
    onSuccess: () => {
      setRationale('');
      onDone();
    },
  });
  const short = rationale.trim().length < 3 || decide.isPending;
  return (
    <div className="actions">
      {isAuthor && <p className="muted">{authorNote}</p>}
      <label htmlFor={`${id}-rationale`}>Rationale</label>
      <textarea
        id={`${id}-rationale`}
        value={rationale}
        maxLength={4000}
        onChange={(e) => setRationale(e.target.value)}
      />
      <div className="row">
        {!isAuthor && (
          <button type="button" disabled={short} onClick={() => decide.mutate('approved')}>
            Approve
          </button>
        )}
        {allowReject && (
          <button
            type="button"
            className="secondary"
            disabled={short}
            onClick={() => decide.mutate('rejected')}
          >
            {isAuthor ? 'Withdraw' : 'Reject'}
          </button>
        )}
      </div>
      {decide.isError && <Problem error={decide.error} />}
    </div>
  );
}
