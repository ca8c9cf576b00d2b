import type { Preview } from '../../mapping/preview.js';
import { When } from './when.js';
import type { MappingFileInfo } from '../mappingsInfo.js';

export function MappingsBody(props: {
  files: MappingFileInfo[];
  previewId: string;
  preview: Preview | null;
  previewError: string | null;
  previewAvailable: boolean;
}) {
  return (
    <>
      <section class="card wide">
        <h2>Mapping files</h2>
        <table class="list">
          <thead>
            <tr>
              <th>CRM</th>
              <th>File</th>
              <th>Changed</th>
              <th>Validation</th>
            </tr>
          </thead>
          <tbody>
            {props.files.map((f) => (
              <tr data-mapping={f.crm}>
                <td>
                  {f.crm}
                  {f.active ? ' (in use)' : ''}
                </td>
                <td class="mono">{f.path}</td>
                <td>{f.exists ? <When at={f.modifiedAt} /> : '–'}</td>
                <td>
                  {!f.exists ? (
                    <span class="muted">no file</span>
                  ) : f.problems.length === 0 ? (
                    <span class="good">valid</span>
                  ) : (
                    <ul class="problems">
                      {f.problems.map((p) => (
                        <li class="mono">{p}</li>
                      ))}
                    </ul>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <p class="muted">
          The worker loaded the file in use at start; after editing, check it here or with crm-sync mappings
          check, then restart.
        </p>
      </section>
      <section class="card wide">
        <h2>Preview one call</h2>
        {props.previewAvailable ? (
          <form method="get" action="/console/mappings" class="row">
            <input
              type="text"
              name="preview"
              value={props.previewId}
              placeholder="Call id"
              aria-label="Call id"
            />
            <button type="submit">Preview</button>
            <span class="muted">Reads the call from the Service and the CRM; writes nothing.</span>
          </form>
        ) : (
          <p class="muted">Preview is available while the worker runs.</p>
        )}
        {props.previewError && <p class="error">{props.previewError}</p>}
        {props.preview && <PreviewBlock p={props.preview} />}
      </section>
    </>
  );
}

function PreviewBlock({ p }: { p: Preview }) {
  const show = (o: { ok: true; value: unknown } | { ok: false; error: string }) =>
    o.ok ? <pre>{JSON.stringify(o.value, null, 2)}</pre> : <p class="error">{o.error}</p>;
  return (
    <div class="preview">
      {p.notes.length > 0 && (
        <ul>
          {p.notes.map((n) => (
            <li>{n}</li>
          ))}
        </ul>
      )}
      <p>
        Matched by <span class="mono">{p.lookup.matchedBy}</span>.
      </p>
      <h3>Context pushed during the call</h3>
      {p.context.ok ? <pre>{JSON.stringify(p.context.value.body, null, 2)}</pre> : show(p.context)}
      <h3>Activity written</h3>
      {show(p.activity)}
      <h3>Follow-ups (for a placeholder draft)</h3>
      {show(p.followups)}
    </div>
  );
}
