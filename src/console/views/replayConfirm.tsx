import type { ReplayInput } from '../../ops/replayRequest.js';
import { ActionForm } from './layout.js';

/** The replay form's fields carried through the confirmation, as the operator sent them. */
const CARRIED = ['callId', 'failed', 'code', 'since', 'until', 'back'] as const;

/**
 * The step between a replay that asks for follow-ups again and doing it: each request makes new
 * drafts at the Service, so the operator confirms having read what that means.
 */
export function ReplayConfirmBody({ form, csrf }: { form: ReplayInput & { back?: unknown }; csrf: string }) {
  return (
    <section class="card wide" id="confirm-regenerate">
      <p>
        This replay also asks the Service to <strong>generate follow-ups again</strong> for the replayed calls
        that have no drafts, including those whose first request was answered with none or may have reached
        the Service (<span class="mono">FOLLOWUP_UNCERTAIN</span>).
      </p>
      <p>
        Each request makes new drafts and costs budget. Drafts the first request made may still arrive and are
        written too, so a call can end up with two sets.
      </p>
      <ActionForm action="/console/replay" csrf={csrf} class="row">
        {CARRIED.map((name) =>
          typeof form[name] === 'string' ? <input type="hidden" name={name} value={form[name]} /> : null,
        )}
        <input type="hidden" name="regenerateFollowups" value="true" />
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit">Replay and generate follow-ups again</button>
      </ActionForm>
      <p>
        <a href={typeof form.back === 'string' ? form.back : '/console/failures'}>Cancel</a> (nothing is
        replayed); or replay without it by leaving the box unticked.
      </p>
    </section>
  );
}

/** The checkbox a replay form carries; ticked, the replay asks for confirmation first. */
export function RegenerateBox() {
  return (
    <label class="regenerate">
      <input type="checkbox" name="regenerateFollowups" value="on" /> also generate follow-ups again (asks to
      confirm)
    </label>
  );
}
