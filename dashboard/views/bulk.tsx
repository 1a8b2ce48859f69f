import { useState } from "preact/hooks";
import { ConfirmDialog, Problem } from "../components";
import { VISIBILITIES, type Visibility } from "../enums";
import type { BulkOutcome } from "../video-list";

/**
 * The bulk actions on the selected rows, and each item's result (docs/api-rules.md#bulk-actions,
 * docs/dashboard.md).
 */
export function BulkBar(props: {
  count: number;
  onAction: (action: "delete" | Visibility) => void;
  outcome: BulkOutcome | null;
}) {
  const [confirming, setConfirming] = useState(false);
  const none = props.count === 0;
  const { outcome } = props;
  return (
    <section class="bulk" aria-label="Selected videos">
      <p class="hint">{none ? "Select videos to act on several at once." : `${props.count} selected.`}</p>
      <div class="actions">
        <button type="button" class="danger" disabled={none} onClick={() => setConfirming(true)}>
          Delete selected
        </button>
        {VISIBILITIES.map((visibility) => (
          <button key={visibility} type="button" disabled={none} onClick={() => props.onAction(visibility)}>
            Make {visibility}
          </button>
        ))}
      </div>
      <ConfirmDialog
        open={confirming}
        title={`Delete ${props.count} ${props.count === 1 ? "video" : "videos"}?`}
        confirm="Delete"
        onConfirm={() => {
          setConfirming(false);
          props.onAction("delete");
        }}
        onCancel={() => setConfirming(false)}
      >
        <p>Their sources, renditions and thumbnails are removed, and this cannot be undone.</p>
      </ConfirmDialog>
      {outcome && (
        <div role="status" class="results">
          <Problem message={outcome.error} />
          {outcome.lines.length > 0 && (
            <ul class="result-list" aria-label="Results">
              {outcome.lines.map((line) => (
                <li key={line.id} class={line.ok ? "ok" : "failed"}>
                  {line.title}: {line.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
